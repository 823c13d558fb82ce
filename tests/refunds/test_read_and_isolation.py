"""GET /api/v2/refunds and GET /api/v2/refunds/{refundId}, and what another merchant sees: nothing."""
import time

import pytest

from gateway.core.signing import compute_checksum
from refunds.models import Refund
from refunds.tasks import refund_process
from tests.support.factories import make_success_payment, refund_body

pytestmark = pytest.mark.django_db


def _get(api, who, path, **params):
    return api.get(path, params, HTTP_X_API_KEY=who.api_key)


def test_list_shows_every_refund_of_the_payment_with_its_totals(api, post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    first = post_refund(refund_body(merchant, payment, refundAmount=1_000)).json()
    second = post_refund(refund_body(merchant, payment, refundAmount=2_000)).json()
    refund_process(Refund.objects.get(refund_id=first["refundId"]).pk)
    response = _get(api, merchant, "/api/v2/refunds", merchantId=merchant.code,
                    sabpaisaTxnId=payment.sabpaisa_txn_id)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert [r["refundId"] for r in body["refunds"]] == [first["refundId"], second["refundId"]]
    assert [r["status"] for r in body["refunds"]] == ["SUCCESS", "INITIATED"]
    assert body["count"] == 2
    assert (body["paidAmountPaise"], body["refundedAmount"], body["refundPendingAmount"], body["refundableAmount"]) == \
        (10_000, 1_000, 2_000, 7_000)


def test_list_of_a_payment_without_refunds_is_empty(api, merchant):
    payment = make_success_payment(merchant)
    body = _get(api, merchant, "/api/v2/refunds", merchantId=merchant.code,
                transactionId=payment.sabpaisa_txn_id).json()
    assert body["refunds"] == [] and body["refundableAmount"] == payment.amount


def test_list_needs_merchant_id_without_the_merchant_header(api, merchant):
    payment = make_success_payment(merchant)
    response = _get(api, merchant, "/api/v2/refunds", sabpaisaTxnId=payment.sabpaisa_txn_id)
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert "merchantId" in response.json()["errorMessage"]


def test_list_without_a_transaction_lists_the_merchants_refunds(api, post_refund, merchant):
    # issue 17: sabpaisaTxnId became optional (SDK 1.0.1 lists a merchant's refunds without one).
    payment = make_success_payment(merchant)
    created = post_refund(refund_body(merchant, payment, refundAmount=1_000)).json()
    response = _get(api, merchant, "/api/v2/refunds", merchantId=merchant.code)
    assert response.status_code == 200
    assert [r["refundId"] for r in response.json()["refunds"]] == [created["refundId"]]


def test_get_returns_the_refund_record(api, post_refund, merchant):
    payment = make_success_payment(merchant)
    created = post_refund(refund_body(merchant, payment, refundAmount=700, refundId="ORDER-7-R1")).json()
    refund_process(Refund.objects.get(refund_id="ORDER-7-R1").pk)
    response = _get(api, merchant, "/api/v2/refunds/ORDER-7-R1")
    assert response.status_code == 200
    body = response.json()
    assert body["refundId"] == "ORDER-7-R1" and body["status"] == "SUCCESS"
    assert body["createdAt"] == created["createdAt"]
    assert body["bankRefundReference"].startswith("RF")
    for field in ("refundId", "sabpaisaTxnId", "merchantTxnId", "refundAmount", "status", "reason",
                  "bankRefundReference", "createdAt", "processedAt", "failureReason", "paymentMode", "refundMethod"):
        assert field in body


def test_get_verifies_the_sdk_query_checksum(api, post_refund, merchant):
    payment = make_success_payment(merchant)
    post_refund(refund_body(merchant, payment, refundAmount=700, refundId="R42"))
    ts = int(time.time())
    good = compute_checksum(merchant.secret_key, merchant.code, "R42", ts)
    ok = _get(api, merchant, "/api/v2/refunds/R42", merchantId=merchant.code, checksum=good, timestamp=str(ts))
    assert ok.status_code == 200
    bad = _get(api, merchant, "/api/v2/refunds/R42", merchantId=merchant.code, checksum="f" * 64, timestamp=str(ts))
    assert bad.json()["errorCode"] == "INVALID_SIGNATURE"
    old = int(time.time()) - 600
    expired = _get(api, merchant, "/api/v2/refunds/R42", merchantId=merchant.code, timestamp=str(old),
                   checksum=compute_checksum(merchant.secret_key, merchant.code, "R42", old))
    assert expired.json()["errorCode"] == "REQUEST_EXPIRED"


def test_get_with_another_merchant_id_is_unauthorized(api, merchant, other_merchant):
    response = _get(api, merchant, "/api/v2/refunds/R1", merchantId=other_merchant.code)
    assert response.status_code == 401


def test_unknown_refund_is_not_found(api, merchant):
    response = _get(api, merchant, "/api/v2/refunds/rfnd_nope")
    assert response.status_code == 404
    assert response.json()["errorCode"] == "NOT_FOUND"


def test_list_answers_in_the_envelope_for_a_wrong_method(api, merchant):
    response = api.delete("/api/v2/refunds", HTTP_X_API_KEY=merchant.api_key)
    assert response.status_code == 405
    assert response.json()["errorCode"] == "METHOD_NOT_ALLOWED"


class TestAnotherMerchant:
    """A merchant never sees or refunds another merchant's payment: NOT_FOUND, as if absent."""

    def test_cannot_refund_another_merchants_payment(self, post_refund, merchant, other_merchant):
        payment = make_success_payment(merchant)
        response = post_refund(refund_body(other_merchant, payment, refundAmount=100), as_=other_merchant)
        assert response.status_code == 404
        assert response.json()["errorCode"] == "NOT_FOUND"
        assert not Refund.objects.exists()

    def test_answer_is_the_same_as_for_a_payment_that_does_not_exist(self, post_refund, merchant, other_merchant):
        payment = make_success_payment(merchant)
        theirs = post_refund(refund_body(other_merchant, payment, refundAmount=100), as_=other_merchant).json()
        absent = post_refund({"merchantId": other_merchant.code, "sabpaisaTxnId": "SP" + "9" * 18,
                              "refundAmount": 100}, as_=other_merchant).json()
        assert theirs["errorCode"] == absent["errorCode"] == "NOT_FOUND"
        assert theirs["errorMessage"].replace(payment.sabpaisa_txn_id, "X") == \
            absent["errorMessage"].replace("SP" + "9" * 18, "X")

    def test_cannot_list_another_merchants_refunds(self, api, post_refund, merchant, other_merchant):
        payment = make_success_payment(merchant)
        post_refund(refund_body(merchant, payment, refundAmount=100))
        response = _get(api, other_merchant, "/api/v2/refunds", merchantId=other_merchant.code,
                        sabpaisaTxnId=payment.sabpaisa_txn_id)
        assert response.status_code == 404

    def test_cannot_read_another_merchants_refund(self, api, post_refund, merchant, other_merchant):
        payment = make_success_payment(merchant)
        refund_id = post_refund(refund_body(merchant, payment, refundAmount=100)).json()["refundId"]
        response = _get(api, other_merchant, f"/api/v2/refunds/{refund_id}")
        assert response.status_code == 404
        assert response.json()["errorCode"] == "NOT_FOUND"

    def test_refund_ids_are_per_merchant(self, post_refund, merchant, other_merchant):
        mine = make_success_payment(merchant)
        theirs = make_success_payment(other_merchant)
        assert post_refund(refund_body(merchant, mine, refundAmount=100, refundId="R-1")).status_code == 200
        response = post_refund(refund_body(other_merchant, theirs, refundAmount=100, refundId="R-1"), as_=other_merchant)
        assert response.status_code == 200
        assert Refund.objects.filter(refund_id="R-1").count() == 2


def test_refund_endpoints_are_in_the_openapi_document(client):
    schema = client.get("/api/schema/?format=json").json()
    assert {"post", "get"} <= set(schema["paths"]["/api/v2/refunds"])
    assert "get" in schema["paths"]["/api/v2/refunds/{refundId}"]
