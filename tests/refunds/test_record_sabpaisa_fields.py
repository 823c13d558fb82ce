"""The refund record (create, get, list, webhooks) carries SabPaisa's names beside ours (issue 17):
txnId, amount, originalAmount, bankRefundId, refundedAt and message, which SDK 1.0.1 reads."""
import pytest

from refunds.models import Refund
from refunds.payloads import refund_record
from refunds.services import refund_create
from refunds.tasks import refund_process
from tests.support.factories import make_success_payment

pytestmark = pytest.mark.django_db

SANDBOX_FAILURE = 100_013


def test_a_new_refund_says_it_is_initiated(post_refund, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    body = post_refund({"merchantId": merchant.code, "sabpaisaTxnId": payment.sabpaisa_txn_id,
                        "refundAmount": 2_500}).json()
    assert (body["txnId"], body["amount"], body["refundAmount"]) == (payment.sabpaisa_txn_id, 2_500, 2_500)
    assert (body["originalAmount"], body["status"], body["message"]) == (10_000, "INITIATED", "refund initiated")
    assert body["bankRefundId"] is None and body["refundedAt"] is None
    assert body["createdAt"].endswith("Z")


def test_a_refund_the_bank_returned_has_its_reference_and_time_under_both_names(api, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    refund = refund_create(merchant=merchant.merchant, payment=payment, amount=4_000, refund_id="R-OK").refund
    refund_process(refund.pk)
    body = api.get("/api/v2/refunds/R-OK", HTTP_X_API_KEY=merchant.api_key).json()
    assert body["status"] == "SUCCESS" and body["message"] == "refund processed by the bank"
    assert body["bankRefundId"] == body["bankRefundReference"] and body["bankRefundId"].startswith("RF")
    assert body["refundedAt"] == body["processedAt"] and body["refundedAt"].endswith("Z")


def test_a_refused_refund_says_why_in_its_message(merchant):
    payment = make_success_payment(merchant, amount=200_000)
    refund = refund_create(merchant=merchant.merchant, payment=payment, amount=SANDBOX_FAILURE).refund
    refund_process(refund.pk)
    record = refund_record(Refund.objects.get(pk=refund.pk))
    assert record["status"] == "FAILED"
    assert record["message"] == record["failureReason"] and record["message"]
    assert record["refundedAt"] is None and record["bankRefundId"] is None
