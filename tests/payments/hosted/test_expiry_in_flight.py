"""A payment whose deadline passes while its bank call is in flight (issue 18, item 7).

The expiry waits for the call (at most EXPIRY_WAITS_FOR_CALL, as long as any acquirer call may
take), so the approval it brings makes the payment SUCCESS; an approval that still comes later
is reversed through the acquirer. Real PostgreSQL with committed transactions; only the
acquirer is a test double, so the test decides when it answers."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.cards import CardInput
from payments.models import Payment, PaymentEvent, Reversal
from payments.services import hosted
from payments.services.expiry import payments_expire_due
from payments.services.reversals import reversal_submit
from payments.services.transitions import EXPIRY_WAITS_FOR_CALL, payment_expire
from payments.state import InvalidTransition
from tests.payments.hosted.doubles import Request, scripted_acquirer
from tests.support.factories import make_merchant
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status
VISA = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2039, cvv="123")


@pytest.fixture
def shop():
    return make_merchant(code="INFLIGHT")


@pytest.fixture
def acquirer(monkeypatch):
    yield from scripted_acquirer(monkeypatch)


def card_waiting_for_otp(tm) -> Payment:
    session = hosted.hosted_payment_create(merchant=tm.merchant, merchant_txn_id=f"ORD-{Payment.objects.count() + 1}",
                                           amount=50000, currency="INR",
                                           return_url="https://shop.example.in/return").payment
    return hosted.hosted_card_pay(payment=session, card=VISA)


def fresh(payment: Payment) -> Payment:
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


def events_of(payment: Payment) -> list[str]:
    return list(WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id).values_list("event_type", flat=True))


def test_the_expiry_sweep_waits_for_an_otp_the_bank_is_checking(shop, acquirer):
    payment = card_waiting_for_otp(shop)
    gate = acquirer.gate("card_verify_otp")
    paying = Request(lambda: hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456"))
    gate.wait_entered()
    # The session's deadline passes while the issuer verifies the OTP.
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert payments_expire_due() == 0
    assert payment_expire(payment_id=payment.pk) is None  # a page's own expiry waits too
    gate.open()
    assert paying.finish().status == S.SUCCESS
    # The customer was charged and the merchant hears exactly that.
    assert events_of(payment) == ["payment.success"]
    assert not Reversal.objects.exists()


def test_the_expiry_waits_no_longer_than_any_acquirer_call_may_take(shop, acquirer):
    payment = card_waiting_for_otp(shop)
    gate = acquirer.gate("card_verify_otp")
    paying = Request(lambda: hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456"))
    gate.wait_entered()
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    later = timezone.now() + EXPIRY_WAITS_FOR_CALL + timedelta(seconds=1)
    assert payments_expire_due(now=later) == 1
    assert fresh(payment).status == S.EXPIRED
    gate.open()
    with pytest.raises(InvalidTransition):
        paying.finish()
    assert events_of(payment) == ["payment.expired"]


def test_an_approval_arriving_after_the_wait_is_reversed_through_the_acquirer(shop, acquirer, caplog):
    payment = card_waiting_for_otp(shop)
    gate = acquirer.gate("card_verify_otp")
    paying = Request(lambda: hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456"))
    gate.wait_entered()
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert payments_expire_due(now=timezone.now() + EXPIRY_WAITS_FOR_CALL + timedelta(seconds=1)) == 1
    gate.open()
    with pytest.raises(InvalidTransition):
        paying.finish()
    [(_, outcome, rrn)] = acquirer.called("card_verify_otp")
    assert outcome == "approved"
    [reversal] = Reversal.objects.filter(payment=payment)
    assert (reversal.status, reversal.bank_rrn, reversal.amount, reversal.payment_status) == (
        Reversal.Status.PENDING, rrn, 50000, S.EXPIRED)
    assert "needs reversal" in caplog.text and rrn in caplog.text

    done = reversal_submit(reversal_pk=reversal.pk)
    assert done.status == Reversal.Status.REVERSED and done.reference.startswith("RV")
    [(_, answered, reference)] = acquirer.called("reverse")
    assert (answered, reference) == ("approved", done.reference)
    assert acquirer.kwargs[-1] == ("reverse", {"bank_rrn": rrn, "amount": 50000, "reversal_id": f"rev_{reversal.pk}"})
    # The payment stays as the merchant was told; the reversal's story is in the payment's.
    assert fresh(payment).status == S.EXPIRED and events_of(payment) == ["payment.expired"]
    story = [(e.from_status, e.to_status) for e in payment.events.filter(kind=PaymentEvent.Kind.REVERSAL)
             if e.to_status]
    assert story == [("", "PENDING"), ("PENDING", "REVERSED")]
