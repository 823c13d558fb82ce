"""POST /api/v2/refunds: what may be refunded, how much, and how the request is checked."""
import time

import pytest

from gateway.core.signing import compute_checksum
from payments.models import Payment
from refunds.models import Refund, RefundEvent
from refunds.services import REFUND_MIN_AMOUNT
from tests.support.factories import make_payment, make_success_payment, refund_body

pytestmark = pytest.mark.django_db


def test_refund_of_part_of_a_payment_is_pending_with_the_interface_fields(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    response = post_refund(refund_body(merchant, payment, refundAmount=2_500, reason="damaged"))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["success"] is True and body["message"] == "refund initiated"
    assert body["refundId"].startswith("rfnd_")
    assert body["status"] == "INITIATED"
    assert body["refundAmount"] == 2_500
    assert body["sabpaisaTxnId"] == payment.sabpaisa_txn_id
    assert body["merchantTxnId"] == payment.merchant_txn_id
    assert body["reason"] == "damaged"
    assert body["paymentMode"] == "UPI"
    assert body["refundMethod"] == "original UPI account success@sandbox"
    assert body["bankRefundReference"] is None and body["processedAt"] is None
    refund = Refund.objects.get(refund_id=body["refundId"])
    assert refund.events.get().to_status == "INITIATED"


def test_refund_without_an_amount_refunds_the_whole_remaining_amount(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    assert post_refund(refund_body(merchant, payment, refundAmount=3_000)).status_code == 200
    response = post_refund(refund_body(merchant, payment))
    assert response.status_code == 200
    assert response.json()["refundAmount"] == 7_000


def test_zero_amount_is_a_validation_error(post_refund, merchant):
    payment = make_success_payment(merchant)
    response = post_refund(refund_body(merchant, payment, refundAmount=0))
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert "refundAmount" in response.json()["errorMessage"]


def test_negative_amount_is_a_validation_error(post_refund, merchant):
    payment = make_success_payment(merchant)
    response = post_refund(refund_body(merchant, payment, amount=-100))
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert "amount" in response.json()["errorMessage"]


def test_refund_below_the_minimum_is_rejected(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    response = post_refund(refund_body(merchant, payment, refundAmount=REFUND_MIN_AMOUNT - 1))
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert "refundAmount" in response.json()["errorMessage"]
    assert not Refund.objects.exists()


def test_refund_of_exactly_the_minimum_is_accepted(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    assert post_refund(refund_body(merchant, payment, refundAmount=REFUND_MIN_AMOUNT)).status_code == 200


def test_remainder_smaller_than_the_minimum_can_be_refunded_exactly(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    assert post_refund(refund_body(merchant, payment, refundAmount=9_950)).status_code == 200
    too_little = post_refund(refund_body(merchant, payment, refundAmount=49))
    assert too_little.json()["errorCode"] == "VALIDATION_ERROR"
    exact = post_refund(refund_body(merchant, payment, refundAmount=50))
    assert exact.status_code == 200, exact.json()


def test_refund_of_exactly_the_remaining_amount_is_accepted(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    assert post_refund(refund_body(merchant, payment, refundAmount=4_000)).status_code == 200
    response = post_refund(refund_body(merchant, payment, refundAmount=6_000))
    assert response.status_code == 200, response.json()


def test_refund_larger_than_remaining_amount_by_one_paisa_is_rejected(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    assert post_refund(refund_body(merchant, payment, refundAmount=4_000)).status_code == 200
    response = post_refund(refund_body(merchant, payment, refundAmount=6_001))
    assert response.status_code == 400
    assert response.json()["errorCode"] == "REFUND_AMOUNT_EXCEEDED"
    assert Refund.objects.count() == 1


def test_refund_larger_than_the_payment_is_rejected(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    response = post_refund(refund_body(merchant, payment, refundAmount=10_001))
    assert response.json()["errorCode"] == "REFUND_AMOUNT_EXCEEDED"


def test_fully_refunded_payment_refuses_another_full_refund(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    assert post_refund(refund_body(merchant, payment)).status_code == 200
    response = post_refund(refund_body(merchant, payment))
    assert response.json()["errorCode"] == "REFUND_AMOUNT_EXCEEDED"


def test_several_partial_refunds_add_up_to_the_payment(post_refund, merchant):
    payment = make_success_payment(merchant, amount=1_000)
    for _ in range(4):
        assert post_refund(refund_body(merchant, payment, refundAmount=250)).status_code == 200
    assert post_refund(refund_body(merchant, payment, refundAmount=100)).json()["errorCode"] == \
        "REFUND_AMOUNT_EXCEEDED"
    assert sum(Refund.objects.values_list("amount", flat=True)) == 1_000


@pytest.mark.parametrize("status", ["PENDING", "PROCESSING", "FAILED", "EXPIRED"])
def test_payment_that_is_not_success_cannot_be_refunded(post_refund, merchant, status):
    payment = make_payment(merchant, status=status)
    assert payment.status == status
    response = post_refund(refund_body(merchant, payment, refundAmount=1_000))
    assert response.status_code == 400
    assert response.json()["errorCode"] == "REFUND_NOT_ALLOWED"
    assert status in response.json()["errorMessage"]
    assert not Refund.objects.exists()


def test_sdk_aliases_transaction_id_and_amount_are_accepted(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    response = post_refund({"merchantId": merchant.code, "transactionId": payment.sabpaisa_txn_id,
                            "amount": 1_234})
    assert response.status_code == 200, response.json()
    assert response.json()["refundAmount"] == 1_234


def test_refund_amount_and_amount_must_agree_when_both_are_sent(post_refund, merchant):
    payment = make_success_payment(merchant)
    same = post_refund(refund_body(merchant, payment, refundAmount=500, amount=500))
    assert same.status_code == 200
    different = post_refund(refund_body(merchant, payment, refundAmount=500, amount=600))
    assert different.json()["errorCode"] == "VALIDATION_ERROR"
    assert "amount" in different.json()["errorMessage"]


def test_transaction_id_must_equal_sabpaisa_txn_id_when_both_are_sent(post_refund, merchant):
    payment = make_success_payment(merchant)
    other = make_success_payment(merchant)
    response = post_refund(refund_body(merchant, payment, transactionId=other.sabpaisa_txn_id))
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert "transactionId" in response.json()["errorMessage"]


@pytest.mark.parametrize("field,value", [
    ("refundAmount", "1000"), ("refundAmount", 10.5), ("refundAmount", True), ("amount", "500"),
    ("sabpaisaTxnId", 12345), ("reason", 7), ("refundId", "has space"), ("refundId", "x" * 65),
])
def test_wrong_types_are_validation_errors_naming_the_field(post_refund, merchant, field, value):
    payment = make_success_payment(merchant)
    response = post_refund({**refund_body(merchant, payment), field: value})
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert field in response.json()["errorMessage"]


def test_missing_transaction_id_is_a_validation_error(post_refund, merchant):
    response = post_refund({"merchantId": merchant.code, "refundAmount": 100})
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert "sabpaisaTxnId" in response.json()["errorMessage"]


def test_missing_merchant_id_is_a_validation_error(post_refund, merchant):
    payment = make_success_payment(merchant)
    response = post_refund({"sabpaisaTxnId": payment.sabpaisa_txn_id})
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert "merchantId" in response.json()["errorMessage"]


def test_malformed_json_is_a_validation_error(api, merchant):
    response = api.generic("POST", "/api/v2/refunds", "{not json", content_type="application/json",
                           **merchant.headers)
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"


def test_unknown_transaction_is_not_found(post_refund, merchant):
    response = post_refund({"merchantId": merchant.code, "sabpaisaTxnId": "SPDOESNOTEXIST", "refundAmount": 100})
    assert response.status_code == 404
    assert response.json()["errorCode"] == "NOT_FOUND"


def test_api_key_is_required(api, merchant):
    payment = make_success_payment(merchant)
    response = api.post("/api/v2/refunds", refund_body(merchant, payment), format="json")
    assert response.status_code == 401
    assert response.json()["errorCode"] == "UNAUTHORIZED"


def test_merchant_id_must_match_the_api_key(post_refund, merchant, other_merchant):
    payment = make_success_payment(merchant)
    body = refund_body(merchant, payment)
    response = post_refund({**body, "merchantId": other_merchant.code}, headers={"HTTP_X_MERCHANT_ID": merchant.code})
    assert response.status_code == 401
    assert response.json()["errorCode"] == "UNAUTHORIZED"


class TestChecksum:
    def test_valid_checksum_over_merchant_txn_refund_id_and_timestamp_is_accepted(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        response = post_refund(refund_body(merchant, payment, sign=True, refundId="REF1001", amount=500))
        assert response.status_code == 200, response.json()
        assert response.json()["refundId"] == "REF1001"

    def test_wrong_checksum_is_invalid_signature(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        body = refund_body(merchant, payment, sign=True, refundId="REF1002")
        body["checksum"] = "0" * 64
        response = post_refund(body)
        assert response.json()["errorCode"] == "INVALID_SIGNATURE"
        assert not Refund.objects.exists()

    def test_checksum_covers_the_refund_id(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        body = refund_body(merchant, payment, sign=True, refundId="REF1003")
        body["refundId"] = "REF1004"
        assert post_refund(body).json()["errorCode"] == "INVALID_SIGNATURE"

    def test_checksum_without_timestamp_is_invalid_timestamp(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        body = refund_body(merchant, payment, sign=True)
        del body["timestamp"]
        assert post_refund(body).json()["errorCode"] == "INVALID_TIMESTAMP"

    def test_timestamp_without_checksum_is_invalid_signature(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        body = refund_body(merchant, payment, sign=True)
        del body["checksum"]
        assert post_refund(body).json()["errorCode"] == "INVALID_SIGNATURE"

    def test_old_timestamp_is_request_expired(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        ts = int(time.time()) - 301
        body = refund_body(merchant, payment, refundId="REF1005", timestamp=ts,
                           checksum=compute_checksum(merchant.secret_key, merchant.code,
                                                     payment.sabpaisa_txn_id, "REF1005", ts))
        assert post_refund(body).json()["errorCode"] == "REQUEST_EXPIRED"

    def test_future_timestamp_is_invalid_timestamp(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        ts = int(time.time()) + 3600
        body = refund_body(merchant, payment, refundId="REF1006", timestamp=ts,
                           checksum=compute_checksum(merchant.secret_key, merchant.code,
                                                     payment.sabpaisa_txn_id, "REF1006", ts))
        assert post_refund(body).json()["errorCode"] == "INVALID_TIMESTAMP"


def test_card_refund_goes_back_to_the_original_card(post_refund, merchant):
    payment = make_success_payment(merchant, payment_mode=Payment.Mode.CARD, card_last4="1111",
                                   card_network="VISA")
    body = post_refund(refund_body(merchant, payment, refundAmount=500)).json()
    assert body["paymentMode"] == "CARD"
    assert body["refundMethod"] == "original card ****1111"


def test_creation_is_the_first_event_of_the_timeline(post_refund, merchant):
    payment = make_success_payment(merchant)
    refund_id = post_refund(refund_body(merchant, payment, refundAmount=500)).json()["refundId"]
    event = RefundEvent.objects.get(refund__refund_id=refund_id)
    assert (event.kind, event.from_status, event.to_status, event.actor_name) == \
        ("status", "", "INITIATED", "merchant API")
