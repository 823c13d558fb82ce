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
    raise AssertionError(target)


ALLOWED = [(a, b) for a in ALL for b in ALL if b in TRANSITIONS[a]]
REFUSED = [(a, b) for a in ALL for b in ALL if b not in TRANSITIONS[a] and b != S.PENDING]


def test_the_table_is_what_the_hosted_flow_needs():
    assert TRANSITIONS[S.PENDING] == {S.PROCESSING, S.FAILED, S.EXPIRED}
    assert TRANSITIONS[S.PROCESSING] == {S.SUCCESS, S.FAILED, S.EXPIRED}
    assert all(not TRANSITIONS[final] for final in Payment.FINAL_STATUSES)
    assert not any(S.PENDING in targets for targets in TRANSITIONS.values())  # nothing goes back


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


def test_nothing_moves_a_payment_back_to_pending():
    assert all(S.PENDING not in TRANSITIONS[status] for status in ALL)


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
