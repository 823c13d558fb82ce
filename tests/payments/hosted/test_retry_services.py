"""Retry in the session, below the page (issue 19): a UPI request left for another method is
cancelled at the acquirer, and an approval that still lands for it is reversed, never a second
charge; every attempt is in the payment's story."""
from __future__ import annotations

import pytest

from payments.acquirer.base import AcquirerUnavailable
from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from payments.models import Payment, Reversal
from payments.services import hosted
from payments.sandbox_upi.approvals import upi_sandbox_approve
from payments.services.upi import upi_change_method, upi_pay
from payments.cards import CardInput
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

S = Payment.Status
VISA = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2039, cvv="123")


@pytest.fixture
def session(merchant):
    return hosted.hosted_payment_create(merchant=merchant.merchant, merchant_txn_id="ORD-RETRY-1", amount=50000,
                                        currency="INR", return_url="https://shop.example.in/return").payment


def fresh(payment):
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


def test_a_left_upi_request_is_cancelled_and_its_approval_never_lands(session):
    upi_pay(payment_id=session.pk, payer_vpa="success@sandbox")
    left = upi_change_method(payment=fresh(session))
    assert (left.status, left.payment_mode, left.payer_vpa, left.failed_attempts) == (S.PENDING, "", "", 0)
    assert upi_sandbox_approve(payment_id=session.pk, attempt=1) is None  # the payer's bank: cancelled
    assert fresh(session).status == S.PENDING and not Reversal.objects.exists()


def test_an_approval_of_a_left_request_that_could_not_be_cancelled_is_reversed(session, monkeypatch):
    def down(self, **kwargs):
        raise AcquirerUnavailable("timeout")

    monkeypatch.setattr(SandboxAcquirer, "upi_cancel", down)
    upi_pay(payment_id=session.pk, payer_vpa="success@sandbox")
    upi_change_method(payment=fresh(session))
    hosted.hosted_card_pay(payment=fresh(session), card=VISA)
    paid = hosted.hosted_card_verify_otp(payment=fresh(session), otp="123456")
    assert paid.status == S.SUCCESS and paid.attempt == 2
    # The customer's UPI app approves the old request after all.
    assert upi_sandbox_approve(payment_id=session.pk, attempt=1) is None
    reversal = Reversal.objects.get(payment=session)
    assert reversal.amount == session.amount and reversal.bank_rrn != paid.bank_rrn
    assert fresh(session).status == S.SUCCESS and fresh(session).bank_rrn == paid.bank_rrn
    assert WebhookEvent.objects.filter(subject_id=session.sabpaisa_txn_id).count() == 1
    story = list(fresh(session).events.values_list("kind", "detail"))
    assert any(kind == "acquirer" and detail.get("step") == "upi_cancel" and detail.get("outcome") == "no answer"
               for kind, detail in story)


def test_every_attempt_is_in_the_payments_story(session):
    upi_pay(payment_id=session.pk, payer_vpa="failure@sandbox")
    hosted.hosted_card_pay(payment=fresh(session), card=VISA)
    hosted.hosted_card_verify_otp(payment=fresh(session), otp="000000")
    hosted.hosted_bank_start(payment=fresh(session), mode="NB", bank_code="HDFC")
    ended = hosted.hosted_bank_complete(payment=fresh(session), approved=False)
    assert ended.status == S.FAILED and ended.payment_mode == "NB"
    attempts = [(e.detail["attempt"], e.detail["method"], e.to_status)
                for e in ended.events.filter(kind="status", detail__outcome="failed")]
    assert attempts == [(1, "UPI", S.PENDING), (2, "CARD", S.PENDING), (3, "NB", S.FAILED)]
    started = [e.detail["attempt"] for e in ended.events.filter(kind="status", to_status=S.PROCESSING)]
    assert started == [1, 2, 3]
