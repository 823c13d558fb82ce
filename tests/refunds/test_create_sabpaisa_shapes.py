"""POST /api/v2/refunds as SabPaisa's SDK 1.0.1 and code written from its docs send it (issue 17):
`txnId` for sabpaisaTxnId, `amount` in paise, `reason` up to 500 characters, and the merchant
in the X-Merchant-Id header instead of the body. A merchant refundId reused with another body
is DUPLICATE_REFUND."""
import pytest

from refunds.models import Refund
from tests.support.factories import make_success_payment, refund_body

pytestmark = pytest.mark.django_db


def _sdk101_body(payment, **fields):
    return {"txnId": payment.sabpaisa_txn_id, "amount": 2_500, "reason": "customer returned the item", **fields}


def test_txn_id_amount_and_the_merchant_header_make_a_refund(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    response = post_refund(_sdk101_body(payment), headers={"HTTP_X_MERCHANT_ID": merchant.code})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["txnId"], body["sabpaisaTxnId"]) == (payment.sabpaisa_txn_id, payment.sabpaisa_txn_id)
    assert (body["amount"], body["refundAmount"], body["status"]) == (2_500, 2_500, "INITIATED")
    refund = Refund.objects.get()
    assert (refund.merchant_id, refund.payment_id, refund.amount) == (merchant.merchant.pk, payment.pk, 2_500)
    assert refund.reason == "customer returned the item"


def test_without_merchant_id_or_the_header_the_merchant_id_is_missing(post_refund, merchant):
    payment = make_success_payment(merchant)
    response = post_refund(_sdk101_body(payment))
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert response.json()["errorMessage"].startswith("merchantId")
    assert not Refund.objects.exists()


def test_a_merchant_header_that_is_not_the_keys_merchant_is_unauthorized(post_refund, merchant, other_merchant):
    payment = make_success_payment(merchant)
    response = post_refund(_sdk101_body(payment), headers={"HTTP_X_MERCHANT_ID": other_merchant.code})
    assert (response.status_code, response.json()["errorCode"]) == (401, "UNAUTHORIZED")
    assert not Refund.objects.exists()


def test_body_merchant_id_is_still_checked_when_the_header_is_sent(post_refund, merchant, other_merchant):
    payment = make_success_payment(merchant)
    response = post_refund(_sdk101_body(payment, merchantId=other_merchant.code),
                           headers={"HTTP_X_MERCHANT_ID": merchant.code})
    assert (response.status_code, response.json()["errorCode"]) == (401, "UNAUTHORIZED")


def test_another_merchants_txn_id_is_not_found(post_refund, merchant, other_merchant):
    theirs = make_success_payment(other_merchant)
    response = post_refund(_sdk101_body(theirs), headers={"HTTP_X_MERCHANT_ID": merchant.code})
    assert (response.status_code, response.json()["errorCode"]) == (404, "NOT_FOUND")


def test_txn_id_must_equal_sabpaisa_txn_id_when_both_are_sent(post_refund, merchant):
    payment, other = make_success_payment(merchant), make_success_payment(merchant)
    response = post_refund(refund_body(merchant, payment, txnId=other.sabpaisa_txn_id))
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert response.json()["errorMessage"].startswith("txnId")
    assert not Refund.objects.exists()


def test_txn_id_alone_names_the_payment(post_refund, merchant):
    payment = make_success_payment(merchant)
    response = post_refund({"merchantId": merchant.code, "txnId": payment.sabpaisa_txn_id, "amount": 100})
    assert response.status_code == 200 and response.json()["sabpaisaTxnId"] == payment.sabpaisa_txn_id


def test_a_reason_of_500_characters_is_kept_whole(post_refund, merchant):
    payment = make_success_payment(merchant)
    response = post_refund(_sdk101_body(payment, reason="r" * 500), headers={"HTTP_X_MERCHANT_ID": merchant.code})
    assert response.status_code == 200, response.json()
    assert Refund.objects.get().reason == "r" * 500 and response.json()["reason"] == "r" * 500


def test_a_reason_of_501_characters_is_a_validation_error(post_refund, merchant):
    payment = make_success_payment(merchant)
    response = post_refund(_sdk101_body(payment, reason="r" * 501), headers={"HTTP_X_MERCHANT_ID": merchant.code})
    assert response.status_code == 400
    assert response.json()["errorMessage"].startswith("reason")
    assert not Refund.objects.exists()


def test_a_signed_request_without_merchant_id_is_signed_with_the_header_merchant(post_refund, merchant):
    from gateway.core.signing import compute_checksum
    import time

    payment = make_success_payment(merchant)
    timestamp = int(time.time())
    checksum = compute_checksum(merchant.secret_key, merchant.code, payment.sabpaisa_txn_id, "R-SIGNED", timestamp)
    response = post_refund(_sdk101_body(payment, refundId="R-SIGNED", timestamp=timestamp, checksum=checksum),
                           headers={"HTTP_X_MERCHANT_ID": merchant.code})
    assert response.status_code == 200, response.json()


class TestDuplicateRefund:
    def test_refund_id_reused_with_another_amount_is_duplicate_refund_409(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        headers = {"HTTP_X_MERCHANT_ID": merchant.code}
        assert post_refund(_sdk101_body(payment, refundId="ORDER-9-R1"), headers=headers).status_code == 200
        response = post_refund(_sdk101_body(payment, refundId="ORDER-9-R1", amount=2_600), headers=headers)
        assert response.status_code == 409
        body = response.json()
        assert body["errorCode"] == "DUPLICATE_REFUND" and body["error"]["code"] == "DUPLICATE_REFUND"
        assert "ORDER-9-R1" in body["errorMessage"]
        assert Refund.objects.get().amount == 2_500

    def test_the_same_body_under_its_aliases_is_a_repeat_not_a_duplicate(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        first = post_refund(refund_body(merchant, payment, refundAmount=2_500, refundId="ORDER-9-R2",
                                        reason="customer returned the item"))
        again = post_refund(_sdk101_body(payment, refundId="ORDER-9-R2"), headers={"HTTP_X_MERCHANT_ID": merchant.code})
        assert first.status_code == again.status_code == 200
        assert again.json()["createdAt"] == first.json()["createdAt"]
        assert Refund.objects.count() == 1
