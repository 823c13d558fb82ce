"""Money taken at the acquirer a payment failed over from (issue 33: nothing charged twice, every
rupee explained). Razorpay opens the order and its UPI payment but the answer is lost on the way
back, so the attempt fails over to Cashfree, where the customer pays; then Razorpay's payment is
approved after all and its signed webhook arrives. The approval is confirmed by Razorpay's
status query and given back at Razorpay; the payment stays Cashfree's, with one final status and
one merchant webhook. Both acquirers are their stateful doubles, their webhooks sent over real
HTTP to this test's live server."""
from __future__ import annotations

import http.client
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.utils import timezone

from gateway.console.story import payment_story
from payments.models import AcquirerNotice, AcquirerRoute, Payment, Reversal
from payments.services.reversals import reversal_submit
from payments.services.upi import hosted_upi_intent
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
from tests.support.factories import make_merchant, make_payment
from tests.support.two_acquirers import both  # noqa: F401 - a fixture
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status
R = Reversal.Status
N = AcquirerNotice.Status
AMOUNT = 25000


@pytest.fixture
def doubles(both, live_server):  # noqa: F811
    cashfree, razorpay = both
    cashfree.webhook_url = f"{live_server.url}/acquirer/cashfree/webhooks"
    razorpay.webhook_url = f"{live_server.url}/acquirer/razorpay/webhooks"
    return cashfree, razorpay


def failed_over(razorpay) -> Payment:
    """A hosted UPI payment routed Razorpay then Cashfree, whose Razorpay order and payment were
    created but whose answer was lost: it fails over to Cashfree, where it waits for the app."""
    merchant = make_merchant(code="FOVR")
    AcquirerRoute.objects.create(merchant=merchant.merchant, method="UPI", acquirers="razorpay,cashfree")
    payment = make_payment(merchant, status=S.PENDING, amount=AMOUNT)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="9876543210", customer_email="asha@example.in")
    razorpay.lose_answers = {"POST /v1/payments/create/upi"}
    payment = hosted_upi_intent(payment_id=payment.pk)
    razorpay.lose_answers = set()
    assert (payment.status, payment.acquirer) == (S.PROCESSING, "cashfree")
    assert len(razorpay.payments_of(payment.sabpaisa_txn_id)) == 1  # Razorpay did open it
    return payment


def paid_at_cashfree(cashfree, payment: Payment) -> Payment:
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", bank_reference="611111111111")
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "611111111111")
    return payment


def redeliver(delivery, url: str):
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("POST", parts.path, body=delivery.body, headers=delivery.headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_an_approval_at_the_acquirer_failed_over_from_is_confirmed_and_reversed_there(doubles):
    cashfree, razorpay = doubles
    payment = paid_at_cashfree(cashfree, failed_over(razorpay))

    razorpay.settle_payment(payment.sabpaisa_txn_id, "captured", rrn="622222222222")
    delivery = razorpay.deliveries[-1]
    assert delivery.status == 200 and delivery.answer["status"] == "APPLIED", delivery.answer
    [reversal] = Reversal.objects.filter(payment=payment)
    assert (reversal.acquirer, reversal.bank_rrn, reversal.amount) == ("razorpay", "622222222222", AMOUNT)

    # Sent to Razorpay, not Cashfree: Razorpay's refund is pending, then processed.
    reversal_submit(reversal_pk=reversal.pk)
    [refund] = razorpay.refunds.values()
    assert (refund["amount"], refund["receipt"]) == (AMOUNT, f"rev_{reversal.pk}")
    razorpay.settle_refund(refund["id"], "processed")
    notice = AcquirerNotice.objects.filter(acquirer="razorpay").latest("pk")
    assert notice.status == N.IGNORED and f"refund of reversal {reversal.pk}" in notice.result, notice.result
    reversal = reversal_submit(reversal_pk=reversal.pk, now=timezone.now() + timedelta(hours=2))
    assert reversal.status == R.REVERSED

    # Razorpay's ledger: the money went back. Cashfree's: untouched.
    [rzp_payment] = razorpay.payments_of(payment.sabpaisa_txn_id)
    assert (rzp_payment["status"], rzp_payment["amount_refunded"]) == ("refunded", AMOUNT)
    assert not any(call.path.endswith("/refunds") and call.method == "POST" for call in cashfree.calls)
    # Our payment: one final status, Cashfree's, and one merchant webhook.
    payment.refresh_from_db()
    assert (payment.status, payment.acquirer, payment.bank_rrn) == (S.SUCCESS, "cashfree", "611111111111")
    assert WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id).count() == 1
    titles = [entry.title for entry in payment_story(payment).entries]
    assert any("approved at razorpay after failing over to cashfree" in t for t in titles), titles
    assert any("at razorpay: reversal PENDING → REVERSED" in t for t in titles), "\n".join(titles)


def test_the_same_approval_delivered_again_is_reversed_once(doubles):
    cashfree, razorpay = doubles
    payment = paid_at_cashfree(cashfree, failed_over(razorpay))
    captured = razorpay.settle_payment(payment.sabpaisa_txn_id, "captured", rrn="633333333333")
    first = razorpay.deliveries[-1]
    assert redeliver(first, razorpay.webhook_url) == 200  # Razorpay's own retry: the same body
    # ... and its other event for the same money, another body.
    razorpay.send_webhook(razorpay.payment_webhook(captured, "order.paid"))
    assert razorpay.deliveries[-1].answer["status"] == "APPLIED"
    [reversal] = Reversal.objects.filter(payment=payment)
    reversal_submit(reversal_pk=reversal.pk)
    reversal_submit(reversal_pk=reversal.pk, now=timezone.now() + timedelta(hours=2))
    assert len(razorpay.refunds) == 1
    [rzp_payment] = razorpay.payments_of(payment.sabpaisa_txn_id)
    assert rzp_payment["amount_refunded"] == AMOUNT


def test_an_approval_razorpays_status_query_does_not_confirm_reverses_nothing(doubles):
    cashfree, razorpay = doubles
    payment = paid_at_cashfree(cashfree, failed_over(razorpay))
    # Signed with Razorpay's secret (a leaked one, a replay of another order's), but Razorpay's
    # payment on this order was never paid.
    [opened] = razorpay.payments_of(payment.sabpaisa_txn_id)
    forged = {**opened, "status": "captured", "captured": True, "acquirer_data": {"rrn": "644444444444"}}
    razorpay.send_webhook(razorpay.payment_webhook(forged))
    delivery = razorpay.deliveries[-1]
    assert delivery.status == 200 and delivery.answer["status"] == "IGNORED"
    notice = AcquirerNotice.objects.filter(acquirer="razorpay").latest("pk")
    assert "not confirmed by its status query" in notice.result
    assert not Reversal.objects.filter(payment=payment).exists() and not razorpay.refunds
    payment.refresh_from_db()
    assert (payment.status, payment.acquirer) == (S.SUCCESS, "cashfree")


def test_a_failure_at_the_acquirer_failed_over_from_changes_nothing(doubles):
    cashfree, razorpay = doubles
    payment = failed_over(razorpay)
    razorpay.settle_payment(payment.sabpaisa_txn_id, "failed")
    assert razorpay.deliveries[-1].answer["status"] == "IGNORED"
    payment.refresh_from_db()
    assert (payment.status, payment.acquirer) == (S.PROCESSING, "cashfree")
    assert not Reversal.objects.filter(payment=payment).exists()
