"""Retrying a refund request is safe: with the merchant's own refundId, and with X-Idempotency-Key."""
import pytest

from refunds.models import Refund
from tests.support.factories import make_success_payment, refund_body

pytestmark = pytest.mark.django_db


class TestRefundId:
    def test_repeat_with_the_same_body_returns_the_same_refund(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        body = refund_body(merchant, payment, refundAmount=6_000, refundId="ORD1-R1", reason="size")
        first = post_refund(body)
        again = post_refund(body)
        assert first.status_code == again.status_code == 200
        assert again.json()["refundId"] == "ORD1-R1"
        assert again.json()["createdAt"] == first.json()["createdAt"]
        assert Refund.objects.count() == 1

    def test_repeat_is_answered_even_when_nothing_remains_to_refund(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        body = refund_body(merchant, payment, refundId="ORD2-FULL")
        assert post_refund(body).status_code == 200
        again = post_refund(body)
        assert again.status_code == 200 and again.json()["refundAmount"] == 10_000

    def test_repeat_signed_afresh_is_the_same_body(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        first = post_refund(refund_body(merchant, payment, sign=True, refundId="SDK-1", amount=500))
        retry = post_refund(refund_body(merchant, payment, sign=True, refundId="SDK-1", amount=500))
        assert retry.status_code == 200
        assert retry.json()["refundId"] == first.json()["refundId"]
        assert Refund.objects.count() == 1

    @pytest.mark.parametrize("change", [{"refundAmount": 5_001}, {"reason": "other"}, {"refundAmount": None}])
    def test_repeat_with_another_body_is_duplicate_refund(self, post_refund, merchant, change):
        payment = make_success_payment(merchant, amount=10_000)
        body = refund_body(merchant, payment, refundAmount=5_000, refundId="ORD3-R1", reason="size")
        assert post_refund(body).status_code == 200
        response = post_refund({k: v for k, v in {**body, **change}.items() if v is not None})
        assert response.status_code == 409
        assert response.json()["errorCode"] == "DUPLICATE_REFUND"
        assert response.json()["error"]["code"] == "DUPLICATE_REFUND"
        assert "ORD3-R1" in response.json()["errorMessage"]
        assert Refund.objects.count() == 1

    def test_refund_id_reused_on_another_payment_is_duplicate_refund(self, post_refund, merchant):
        first, second = make_success_payment(merchant), make_success_payment(merchant)
        assert post_refund(refund_body(merchant, first, refundAmount=500, refundId="R-X")).status_code == 200
        response = post_refund(refund_body(merchant, second, refundAmount=500, refundId="R-X"))
        assert (response.status_code, response.json()["errorCode"]) == (409, "DUPLICATE_REFUND")

    def test_amount_alias_is_the_same_body_as_refund_amount(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        assert post_refund(refund_body(merchant, payment, refundAmount=500, refundId="R-A")).status_code == 200
        again = post_refund({"merchantId": merchant.code, "transactionId": payment.sabpaisa_txn_id,
                             "amount": 500, "refundId": "R-A"})
        assert again.status_code == 200
        assert Refund.objects.count() == 1

    def test_refused_request_does_not_take_the_refund_id(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=1_000)
        refused = post_refund(refund_body(merchant, payment, refundAmount=1_001, refundId="R-B"))
        assert refused.json()["errorCode"] == "REFUND_AMOUNT_EXCEEDED"
        accepted = post_refund(refund_body(merchant, payment, refundAmount=1_000, refundId="R-B"))
        assert accepted.status_code == 200


class TestIdempotencyKey:
    def test_same_key_and_body_replays_the_first_response(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        body = refund_body(merchant, payment, refundAmount=4_000)
        first = post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "key-1"})
        again = post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "key-1"})
        assert first.status_code == again.status_code == 200
        assert again.json() == first.json()
        assert again["Idempotent-Replayed"] == "true"
        assert Refund.objects.count() == 1

    def test_same_key_with_another_body_is_idempotency_mismatch(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        assert post_refund(refund_body(merchant, payment, refundAmount=4_000),
                           headers={"HTTP_X_IDEMPOTENCY_KEY": "key-2"}).status_code == 200
        response = post_refund(refund_body(merchant, payment, refundAmount=4_001),
                               headers={"HTTP_X_IDEMPOTENCY_KEY": "key-2"})
        assert response.status_code == 400
        assert response.json()["errorCode"] == "IDEMPOTENCY_MISMATCH"
        assert Refund.objects.count() == 1

    def test_another_key_is_another_refund(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        body = refund_body(merchant, payment, refundAmount=4_000)
        assert post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "key-3"}).status_code == 200
        assert post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "key-4"}).status_code == 200
        assert Refund.objects.count() == 2

    def test_refused_request_gives_the_key_back(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=1_000)
        body = refund_body(merchant, payment, refundAmount=1_000)
        post_refund(body)  # refunds everything, without a key
        refused = post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "key-5"})
        assert refused.json()["errorCode"] == "REFUND_AMOUNT_EXCEEDED"
        other = make_success_payment(merchant, amount=1_000)
        retry = post_refund(refund_body(merchant, other, refundAmount=1_000), headers={"HTTP_X_IDEMPOTENCY_KEY": "key-5"})
        assert retry.status_code == 200

    def test_key_and_refund_id_together(self, post_refund, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        body = refund_body(merchant, payment, refundAmount=4_000, refundId="BOTH-1")
        first = post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "key-6"})
        by_refund_id = post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "key-7"})
        assert first.status_code == by_refund_id.status_code == 200
        assert by_refund_id.json()["refundId"] == "BOTH-1"
        assert Refund.objects.count() == 1

    def test_malformed_key_is_a_validation_error(self, post_refund, merchant):
        payment = make_success_payment(merchant)
        response = post_refund(refund_body(merchant, payment, refundAmount=500),
                               headers={"HTTP_X_IDEMPOTENCY_KEY": "has space"})
        assert response.json()["errorCode"] == "VALIDATION_ERROR"
        assert "X-Idempotency-Key" in response.json()["errorMessage"]
