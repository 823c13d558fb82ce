"""Inputs that once made an endpoint answer 500, pinned so they never do again.

Found while fuzzing the API (tests/fuzz/test_api_schema.py and hand-written probes beside it):
JSON can carry what a database cannot store (a lone surrogate such as "\\ud800", NUL, a number
too big for a double, which Python parses as infinity). Each must be a VALIDATION_ERROR naming
the field, or a NOT_FOUND, never an INTERNAL_ERROR.
"""
from __future__ import annotations

import json
import time

import pytest

from gateway.core.signing import compute_checksum
from payments.models import Payment
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db


def _raw_json(body: dict) -> str:
    # json.dumps writes a lone surrogate as the escape "\ud800" and infinity as the non-JSON
    # "Infinity"; a number too big for a double is what a client sends instead.
    return json.dumps(body).replace("Infinity", "1e400")


@pytest.mark.parametrize("metadata", [
    {"note": "\ud800"},
    {"\udfff": "value"},
    {"big": float("inf")},
    {"small": float("-inf")},
], ids=["surrogate value", "surrogate key", "1e400", "-1e400"])
def test_hosted_metadata_a_database_cannot_store_is_a_validation_error(client, metadata):
    tm = make_merchant(code="FOUND")
    ts = int(time.time())
    body = {"merchantId": tm.code, "merchantTxnId": "FOUND-1", "amount": 10_000, "currency": "INR",
            "returnUrl": "http://merchant.test/return", "timestamp": ts, "metadata": metadata,
            "checksum": compute_checksum(tm.secret_key, tm.code, "FOUND-1", 10_000, "INR", ts)}
    response = client.post("/api/v2/payments", _raw_json(body), content_type="application/json",
                           HTTP_X_API_KEY=tm.api_key)
    assert response.status_code == 400, response.content
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert response.json()["errorMessage"].startswith("metadata")
    assert not Payment.objects.exists()


DEEP_BODIES = {"array": "[" * 5000 + "]" * 5000, "object": '{"a":' * 5000 + "1" + "}" * 5000}


@pytest.mark.parametrize("path", ["/api/v2/payments", "/api/v2/payments/s2s", "/api/v2/payments/enquiry",
                                  "/api/v2/refunds", "/api/v2/tokens", "/sandbox/upi/pay"])
@pytest.mark.parametrize("shape", sorted(DEEP_BODIES))
def test_a_body_nested_thousands_deep_is_a_validation_error(client, path, shape):
    # A few kilobytes, but deeper than Python's json module can recurse.
    tm = make_merchant(code="FOUND")
    response = client.post(path, DEEP_BODIES[shape], content_type="application/json",
                           HTTP_X_API_KEY=tm.api_key, HTTP_X_MERCHANT_ID=tm.code)
    assert response.status_code == 400, response.content
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert response.json()["errorMessage"].startswith("body")
