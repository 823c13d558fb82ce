"""PostgreSQL text cannot hold NUL: every way one can arrive is refused before the database."""
import json

import pytest

from tests.support.factories import make_merchant, now


@pytest.fixture
def shop(db):
    return make_merchant(code="NULSHOP")


@pytest.mark.parametrize("path", ["/api/v2/tokens/tok_%00", "/checkout/pay_%00", "/api/v2/refunds/r%00"])
def test_a_nul_in_the_path_is_not_found(client, shop, path):
    response = client.get(path, **shop.headers)
    assert response.status_code == 404
    assert response.json()["errorCode"] == "NOT_FOUND"


def test_a_nul_in_a_query_parameter_is_a_validation_error_naming_it(client, shop):
    response = client.get("/api/v2/payments", {"merchantId": shop.code, "merchantTxnId": "A\x00B"}, **shop.headers)
    assert response.status_code == 400
    body = response.json()
    assert body["errorCode"] == "VALIDATION_ERROR"
    assert body["errorMessage"].startswith("merchantTxnId")


@pytest.mark.parametrize("endpoint", ["/api/v2/payments", "/api/v2/payments/s2s", "/api/v2/refunds",
                                      "/api/v2/payments/enquiry", "/api/v2/tokens"])
def test_a_nul_anywhere_in_a_json_body_is_a_validation_error_naming_the_field(client, shop, endpoint):
    body = {"merchantId": shop.code, "merchantTxnId": "ORD-1", "metadata": {"note": "a\x00b"},
            "timestamp": now()}
    response = client.post(endpoint, data=json.dumps(body), content_type="application/json", **shop.headers)
    assert response.status_code == 400
    envelope = response.json()
    assert envelope["errorCode"] == "VALIDATION_ERROR"
    assert envelope["errorMessage"].startswith("metadata.note")
