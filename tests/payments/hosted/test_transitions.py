"""Every move of payments/state.py's table through payments.services.transitions, and every
move it refuses: allowed moves write the status, one event and (when final) one webhook
event; refused moves change nothing."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.models import Payment, PaymentEvent
from payments.services import transitions
from payments.state import TRANSITIONS, InvalidTransition
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

S = Payment.Status
ALL = list(S)


def payment_in(merchant, status, *, expired=True) -> Payment:
    deadline = timezone.now() - timedelta(seconds=1) if expired else timezone.now() + timedelta(minutes=30)
    return Payment.objects.create(merchant=merchant.merchant, flow=Payment.Flow.HOSTED, status=status,
                                  amount=25000, merchant_txn_id=f"T-{status}", expires_at=deadline,
                                  payment_mode="CARD" if status != S.PENDING else "")


def move(payment: Payment, target: str):
    if target == S.PROCESSING:
        return transitions.payment_mark_processing(payment_id=payment.pk, payment_mode="CARD")
    if target == S.SUCCESS:
        return transitions.payment_mark_succeeded(payment_id=payment.pk, bank_rrn="123456789012")
    if target == S.FAILED:
        return transitions.payment_mark_failed(payment_id=payment.pk, reason="declined")
    if target == S.EXPIRED:
        return transitions.payment_expire(payment_id=payment.pk)
    if target == S.PENDING:  # a hosted attempt failed: the methods again
        return transitions.payment_attempt_failed(payment_id=payment.pk, reason="declined")
    raise AssertionError(target)


ALLOWED = [(a, b) for a in ALL for b in ALL if b in TRANSITIONS[a]]
REFUSED = [(a, b) for a in ALL for b in ALL if b not in TRANSITIONS[a]]


def test_the_table_is_what_the_hosted_flow_needs():
    assert TRANSITIONS[S.PENDING] == {S.PROCESSING, S.FAILED, S.EXPIRED}
    # Back to PENDING: a failed hosted attempt (CONTRACT.md: the methods are offered again).
    assert TRANSITIONS[S.PROCESSING] == {S.SUCCESS, S.FAILED, S.EXPIRED, S.PENDING}
    assert all(not TRANSITIONS[final] for final in Payment.FINAL_STATUSES)


@pytest.mark.parametrize(("current", "target"), ALLOWED)
def test_allowed_transition_writes_status_event_and_final_webhook(merchant, current, target):
    payment = payment_in(merchant, current)
    moved = move(payment, target)
    assert moved.status == target
    payment.refresh_from_db()
    assert payment.status == target
    event = payment.events.get(kind=PaymentEvent.Kind.STATUS)
    assert (event.from_status, event.to_status) == (current, target)
    webhooks = WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id)
    if target in Payment.FINAL_STATUSES:
        assert payment.completed_at is not None
        assert [w.event_type for w in webhooks] == [f"payment.{target.lower()}"]
        assert webhooks.get().payload["txn_id"] == payment.sabpaisa_txn_id
    else:
        assert not webhooks.exists()
    if target == S.SUCCESS:
        assert payment.bank_rrn == "123456789012" and payment.paid_amount == payment.amount


@pytest.mark.parametrize(("current", "target"), REFUSED)
def test_refused_transition_changes_nothing(merchant, current, target):
    payment = payment_in(merchant, current)
    if target == S.EXPIRED:
        # Expiry is a no-op (None), not an error, on a final payment: the sweep may race a result.
        assert move(payment, target) is None
    else:
        with pytest.raises(InvalidTransition):
            move(payment, target)
    payment.refresh_from_db()
    assert payment.status == current
    assert not payment.events.exists()
    assert not WebhookEvent.objects.exists()


def test_only_an_attempt_in_flight_moves_a_payment_back_to_pending():
    assert [status for status in ALL if S.PENDING in TRANSITIONS[status]] == [S.PROCESSING]


def test_a_failed_attempt_of_an_s2s_payment_is_final(merchant):
    payment = payment_in(merchant, S.PROCESSING)
    Payment.objects.filter(pk=payment.pk).update(flow=Payment.Flow.S2S, payment_mode="")
    assert transitions.payment_attempt_failed(payment_id=payment.pk, reason="declined").status == S.FAILED


def test_the_third_failed_attempt_ends_a_hosted_payment_with_one_webhook(merchant):
    payment = payment_in(merchant, S.PENDING, expired=False)
    for attempt in (1, 2, 3):
        started = transitions.payment_mark_processing(payment_id=payment.pk, payment_mode="CARD")
        assert started.attempt == attempt and started.attempt_error == ""
        failed = transitions.payment_attempt_failed(payment_id=payment.pk, reason=f"declined {attempt}")
        assert failed.failed_attempts == attempt
    assert failed.status == S.FAILED and failed.failure_reason == "declined 3"
    assert [e.to_status for e in payment.events.filter(kind="status")] == [S.PROCESSING, S.PENDING] * 2 + [
        S.PROCESSING, S.FAILED]
    assert WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id).count() == 1


def test_an_answer_for_an_attempt_that_is_over_decides_nothing(merchant):
    payment = payment_in(merchant, S.PENDING, expired=False)
    transitions.payment_mark_processing(payment_id=payment.pk, payment_mode="UPI")
    transitions.payment_attempt_failed(payment_id=payment.pk, reason="declined")
    transitions.payment_mark_processing(payment_id=payment.pk, payment_mode="CARD")  # attempt 2
    with pytest.raises(InvalidTransition):
        transitions.payment_mark_succeeded(payment_id=payment.pk, bank_rrn="123456789012", attempt=1)
    with pytest.raises(InvalidTransition):
        transitions.payment_attempt_failed(payment_id=payment.pk, reason="late", attempt=1)
    payment.refresh_from_db()
    assert (payment.status, payment.attempt, payment.failed_attempts) == (S.PROCESSING, 2, 1)


@pytest.mark.parametrize("current", [S.PENDING, S.PROCESSING])
def test_expiry_waits_for_the_deadline(merchant, current):
    payment = payment_in(merchant, current, expired=False)
    assert transitions.payment_expire(payment_id=payment.pk) is None
    assert transitions.payment_expire(payment_id=payment.pk,
                                      now=payment.expires_at + timedelta(seconds=1)).status == S.EXPIRED


def test_success_needs_a_bank_reference(merchant):
    payment = payment_in(merchant, S.PROCESSING)
    with pytest.raises(ValueError):
        transitions.payment_mark_succeeded(payment_id=payment.pk, bank_rrn="")
    payment.refresh_from_db()
    assert payment.status == S.PROCESSING
