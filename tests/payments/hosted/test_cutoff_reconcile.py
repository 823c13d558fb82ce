"""payments.services.cutoff: a hosted step whose acquirer answer was cut off (its claim
committed, the call made or not, no answer recorded: the process or the database went down)
is settled by asking the acquirer what it answered, instead of waiting for the expiry.

A cut-off is made as it happens: the step is claimed as the service claims it, the sandbox
acquirer is called (or not), and its answer is never recorded."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from payments.acquirer.base import AcquirerUnavailable
from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from payments.cards import CardInput
from payments.models import Payment, PaymentEvent, Reversal
from payments.services import hosted
from payments.services.acquirer_answers import NEEDS_REVERSAL, STATUS_QUERY_AFTER
from payments.services.expiry import payments_expire_due
from payments.services.transitions import EXPIRY_WAITS_FOR_CALL
from payments.services.hosted.steps import _claim
from payments.services.cutoff import hosted_cut_off_calls, hosted_unanswered_reconcile
from payments.tasks import payments_expire_sweep
from tests.console.test_search import whole_table_reads
from tests.payments.hosted.doubles import scripted_acquirer

pytestmark = pytest.mark.django_db

S = Payment.Status
VISA = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2039, cvv="123")
SANDBOX = SandboxAcquirer()
DUE = STATUS_QUERY_AFTER + timedelta(seconds=1)


def new_session(tm) -> Payment:
    return hosted.hosted_payment_create(merchant=tm.merchant, merchant_txn_id=f"CUT-{Payment.objects.count() + 1}",
                                        amount=50000, currency="INR",
                                        return_url="https://shop.example.in/return").payment


def claimed(payment: Payment, *, ago: timedelta = DUE, **claim) -> Payment:
    """Claim the payment's step as the service does, then date the claim `ago` back."""
    payment = _claim(payment, **claim)
    Payment.objects.filter(pk=payment.pk).update(acquirer_call_started_at=timezone.now() - ago)
    return payment


def card_waiting_for_otp(tm, **kw) -> Payment:
    payment = hosted.hosted_card_pay(payment=new_session(tm), card=VISA)
    return claimed(payment, modes=(Payment.Mode.CARD,), target=S.SUCCESS, field="otp", challenge=True, **kw)


def status_answers(payment: Payment) -> list[dict]:
    return [e.detail for e in PaymentEvent.objects.filter(payment=payment, kind=PaymentEvent.Kind.ACQUIRER)
            .order_by("id") if e.detail.get("step", "").endswith("_status")]


def test_an_otp_the_acquirer_approved_ends_in_success_with_its_reference(merchant):
    payment = card_waiting_for_otp(merchant)
    answer = SANDBOX.card_verify_otp(payment=payment, otp="123456", challenge_ref=payment.card_challenge_ref)
    # ... and the process died before recording it: the customer's retry is refused.
    assert hosted_unanswered_reconcile() == 1
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn, payment.acquirer_call_started_at) == (S.SUCCESS, answer.reference, None)
    assert status_answers(payment)[0]["step"] == "card_verify_otp_status"
    assert status_answers(payment)[0]["outcome"] == "approved"


def test_a_bank_page_the_acquirer_declined_fails_the_attempt(merchant):
    payment = hosted.hosted_bank_start(payment=new_session(merchant), mode="NB", bank_code="SBIN")
    payment = claimed(payment, modes=hosted.BANK_MODES, target=S.FAILED, field="decision")
    SANDBOX.bank_authorize(payment=payment, bank_code="SBIN", approved=False)
    assert hosted_unanswered_reconcile() == 1
    payment.refresh_from_db()
    # A failed attempt (CONTRACT.md): the methods again, with the bank's reason.
    assert payment.status == S.PENDING and payment.attempt_error == "declined on the bank's page (sandbox)"
    assert payment.acquirer_call_started_at is None and payment.failed_attempts == 1


def test_funds_the_acquirer_credited_end_in_success(merchant):
    payment = hosted.hosted_transfer_start(payment=new_session(merchant), mode="NEFT")
    payment = claimed(payment, modes=hosted.TRANSFER_MODES, target=S.SUCCESS, field="reference")
    answer = SANDBOX.transfer_received(payment=payment, amount=payment.amount)
    assert hosted_unanswered_reconcile() == 1
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, answer.reference)


def test_a_call_the_acquirer_never_got_gives_the_claim_back_and_the_customer_can_try_again(merchant):
    payment = card_waiting_for_otp(merchant)  # claimed, then down before the call went out
    assert hosted_unanswered_reconcile() == 1
    payment.refresh_from_db()
    assert (payment.status, payment.acquirer_call_started_at) == (S.PROCESSING, None)
    assert status_answers(payment)[0]["outcome"] == "no such call"
    assert hosted.hosted_card_verify_otp(payment=payment, otp="123456").status == S.SUCCESS


def test_claims_that_may_still_be_in_flight_are_not_asked_about(merchant, monkeypatch):
    asked = []
    monkeypatch.setattr(SandboxAcquirer, "call_status", lambda self, **kw: asked.append(kw))
    card_waiting_for_otp(merchant, ago=timedelta(seconds=5))
    hosted.hosted_card_pay(payment=new_session(merchant), card=VISA)  # no claim at all
    assert hosted_unanswered_reconcile() == 0 and asked == []


@pytest.fixture
def acquirer(monkeypatch):
    yield from scripted_acquirer(monkeypatch)


def test_an_unreachable_acquirer_is_asked_again_a_period_later_and_never_twice_at_once(merchant, acquirer):
    acquirer.fail("call_status", AcquirerUnavailable("down"))
    payment = card_waiting_for_otp(merchant)
    SANDBOX.card_verify_otp(payment=payment, otp="123456", challenge_ref=payment.card_challenge_ref)
    assert hosted_unanswered_reconcile() == 1
    assert hosted_unanswered_reconcile() == 0  # a second sweep at the same time passes it by
    payment.refresh_from_db()
    assert payment.status == S.PROCESSING and payment.acquirer_call_started_at is not None
    acquirer.fail("call_status", None)
    assert hosted_unanswered_reconcile(now=timezone.now() + DUE) == 1
    payment.refresh_from_db()
    assert payment.status == S.SUCCESS
    assert [call[1] for call in acquirer.called("call_status")] == ["error", "approved"]


def test_the_sweep_settles_a_cut_off_approval_before_it_expires_anything(merchant):
    payment = card_waiting_for_otp(merchant)
    SANDBOX.card_verify_otp(payment=payment, otp="123456", challenge_ref=payment.card_challenge_ref)
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    payments_expire_sweep()
    payment.refresh_from_db()
    assert payment.status == S.SUCCESS


def test_an_approval_found_after_the_payment_expired_is_kept_for_reversal(merchant, caplog):
    payment = card_waiting_for_otp(merchant, ago=timedelta(seconds=5))
    answer = SANDBOX.card_verify_otp(payment=payment, otp="123456", challenge_ref=payment.card_challenge_ref)
    # The deadline passed, and the expiry waited for the claim as long as it waits for any.
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert payments_expire_due() == 0
    assert payments_expire_due(now=timezone.now() + EXPIRY_WAITS_FOR_CALL + timedelta(seconds=1)) == 1
    assert hosted_unanswered_reconcile(now=timezone.now() + DUE) == 1
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn, payment.acquirer_call_started_at) == (S.EXPIRED, "", None)
    kept = PaymentEvent.objects.get(payment=payment, detail__result=NEEDS_REVERSAL)
    assert (kept.detail["reference"], kept.detail["step"]) == (answer.reference, "card_verify_otp_status")
    assert NEEDS_REVERSAL in caplog.text and answer.reference in caplog.text
    assert Reversal.objects.get(payment=payment).bank_rrn == answer.reference  # and given back
    assert hosted_unanswered_reconcile(now=timezone.now() + 2 * DUE) == 0  # settled: not asked again


def test_the_sweep_reads_only_claimed_open_payments_through_an_index(merchant):
    card_waiting_for_otp(merchant)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    plan = hosted_cut_off_calls(timezone.now()).explain(format="json")
    assert whole_table_reads(json.loads(plan)[0]["Plan"]) == [], plan
    assert "payment_call_claimed" in plan
