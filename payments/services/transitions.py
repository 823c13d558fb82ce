"""The only code that changes a payment's status.

Each function is one durable transaction that, in order: locks the payment row
(payments.locks), checks the move against payments.state.TRANSITIONS, writes the new status,
appends a PaymentEvent and, for a final status, records the webhook event in the outbox. A
payment can therefore reach a final status once, and emits exactly one event when it does.
"""
from __future__ import annotations

import copy
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from gateway.platform.methods import ensure_method_takes
from payments.acquirer.base import CALL_TIME_LIMIT
from payments.services.acquirer_methods import acquirer_methods
from payments.locks import lock_payment, lock_payments_due_for_expiry
from payments.models import Payment, PaymentEvent
from payments.payloads import EVENT_TYPES, webhook_payload
from payments.state import InvalidTransition, ensure_transition
from payments.writes import payment_events_insert
from gateway.core.metrics import on_commit_inc, payments_final

S = Payment.Status


def _transition(payment: Payment, target: str, *, detail: dict | None = None, guard=None, **fields) -> Payment:
    """Move `payment`, locked by the caller in this transaction (lock_payment), to `target`:
    the row is locked once per transition, not again here."""
    ensure_transition(payment.status, target)
    if guard is not None:
        guard(payment)  # a condition of this move beyond the table, checked under the lock
    previous = payment.status
    payment.status = target
    for name, value in fields.items():
        setattr(payment, name, value)
    if target in Payment.FINAL_STATUSES:
        payment.completed_at = timezone.now()
    payment.save()
    PaymentEvent.objects.create(payment=payment, kind=PaymentEvent.Kind.STATUS, from_status=previous,
                                to_status=target, detail=detail or {})
    if target in Payment.FINAL_STATUSES:
        from webhooks.services import event_record

        on_commit_inc(payments_final.labels(payment.payment_mode or "NONE", target))

        event_record(merchant=payment.merchant, event_type=EVENT_TYPES[target],
                     payload=webhook_payload(payment), subject_id=payment.sabpaisa_txn_id, url=payment.webhook_url)
    return payment


@transaction.atomic(durable=True)
def payment_mark_processing(*, payment_id: int, payment_mode: str, detail: dict | None = None,
                            expires_at: datetime | None = None, **fields) -> Payment:
    """PENDING -> PROCESSING: the customer chose `payment_mode` and the acquirer took it. For a
    hosted payment this starts its next attempt (`attempt` + 1, the last attempt's error
    cleared). `expires_at` may extend the deadline (bank transfers stay open longer than a
    session). Raises InvalidTransition when the payment is no longer PENDING, ValidationError
    naming paymentMode when the merchant does not offer that method for the payment's amount
    (gateway.platform.methods: the page never shows it, so only a forged form gets here)."""
    if expires_at is not None:
        fields["expires_at"] = expires_at
    payment = lock_payment(payment_id)
    if payment.flow == Payment.Flow.HOSTED:
        fields.update(attempt=payment.attempt + 1, attempt_error="")
        detail = {**(detail or {}), "attempt": payment.attempt + 1}

    def offered(locked: Payment) -> None:
        ensure_method_takes(locked.merchant.payment_methods, payment_mode, locked.amount, carried=acquirer_methods(locked.merchant_id))

    return _transition(payment, S.PROCESSING, detail=detail, guard=offered, payment_mode=payment_mode, **fields)


def _ensure_attempt(payment: Payment, attempt: int | None, target: str) -> None:
    """An answer for attempt `attempt` may only act while that attempt is the payment's
    current one: a late answer for an attempt the customer left must not decide the next."""
    if attempt is not None and payment.attempt != attempt:
        raise InvalidTransition(payment.status, target)


@transaction.atomic(durable=True)
def payment_mark_succeeded(*, payment_id: int, bank_rrn: str, paid_amount: int | None = None,
                           detail: dict | None = None, attempt: int | None = None, **fields) -> Payment:
    """PROCESSING -> SUCCESS with the bank reference. `paid_amount` defaults to the amount.
    With `attempt`, only while that is the payment's current attempt.
    Raises InvalidTransition when the payment is not PROCESSING (e.g. already final, or back
    to PENDING after the customer left that attempt)."""
    if not bank_rrn:
        raise ValueError("a successful payment needs its bank reference")
    payment = lock_payment(payment_id)
    _ensure_attempt(payment, attempt, S.SUCCESS)
    return _transition(payment, S.SUCCESS, detail=detail, bank_rrn=bank_rrn,
                       paid_amount=paid_amount or payment.amount, **fields)


@transaction.atomic(durable=True)
def payment_mark_failed(*, payment_id: int, reason: str, detail: dict | None = None, **fields) -> Payment:
    """PENDING or PROCESSING -> FAILED. Raises InvalidTransition when already final."""
    return _transition(lock_payment(payment_id), S.FAILED, detail=detail, failure_reason=reason[:200], **fields)


# What belongs to one attempt, cleared when the payment goes back to PENDING so the next
# attempt starts clean (the story keeps each attempt's details).
_ATTEMPT_FIELDS = {"payment_mode": "", "payer_vpa": "", "card_last4": "", "card_network": "", "card_issuer": "",
                   "card_challenge_ref": "", "bank_code": "", "acquirer_call_started_at": None}


@transaction.atomic(durable=True)
def payment_attempt_failed(*, payment_id: int, reason: str, detail: dict | None = None,
                           attempt: int | None = None, **fields) -> Payment:
    """The acquirer declined the payment's attempt (a card declined, a wrong OTP, a UPI, bank
    or wallet payment declined). A hosted payment goes back to PENDING (PROCESSING ->
    PENDING) with `reason` to show, and the customer may try again; its
    Payment.MAX_FAILED_ATTEMPTS-th failure, and any failure of an S2S payment, is FAILED.
    With `attempt`, only while that is the payment's current attempt.
    Raises InvalidTransition when the payment is not PROCESSING (final already, or that
    attempt is over)."""
    payment = lock_payment(payment_id)
    _ensure_attempt(payment, attempt, S.PENDING)
    if payment.status != S.PROCESSING:
        raise InvalidTransition(payment.status, S.PENDING)
    reason = reason[:200]
    if payment.flow != Payment.Flow.HOSTED:
        return _transition(payment, S.FAILED, detail=detail, failure_reason=reason, **fields)
    failed = payment.failed_attempts + 1
    detail = {**(detail or {}), "attempt": payment.attempt, "outcome": "failed", "reason": reason,
              "method": payment.payment_mode, "failedAttempts": failed}
    if failed >= Payment.MAX_FAILED_ATTEMPTS:
        detail["result"] = f"{failed} failed attempts end the payment"
        return _transition(payment, S.FAILED, detail=detail, failure_reason=reason, failed_attempts=failed,
                           **{"acquirer_call_started_at": None, **fields})
    return _transition(payment, S.PENDING, detail=detail, failed_attempts=failed, attempt_error=reason,
                       **{**_ATTEMPT_FIELDS, **fields})


@transaction.atomic(durable=True)
def payment_attempt_abandon(*, payment_id: int, modes: tuple, reason: str) -> tuple[Payment, Payment]:
    """The customer left the payment's attempt in one of `modes` while it waited (a UPI
    request not yet approved) to choose another method: PROCESSING -> PENDING. Not a failure,
    so it does not count towards MAX_FAILED_ATTEMPTS. Returns (the payment as it was, as it is
    now): the caller asks the acquirer to cancel what the first one started.
    Raises InvalidTransition when the payment is not waiting in one of `modes`."""
    payment = lock_payment(payment_id)
    if payment.status != S.PROCESSING or payment.payment_mode not in modes or payment.acquirer_call_started_at:
        raise InvalidTransition(payment.status, S.PENDING)
    detail = {"attempt": payment.attempt, "outcome": "abandoned", "reason": reason, "method": payment.payment_mode}
    # The payment as it was, for the caller (its payer, its challenge), apart from the one moved.
    return copy.copy(payment), _transition(payment, S.PENDING, detail=detail, **_ATTEMPT_FIELDS)
# The expiry waits for an acquirer call in flight (`acquirer_call_started_at`, a card's OTP, a
# bank's page, funds arriving) rather than expire the payment under it: an approval that then
# arrived would find it EXPIRED, with the customer charged and the merchant told it did not
# happen. It waits at most the time any acquirer call may take (CALL_TIME_LIMIT, 60 s), from
# the call's start and from the deadline alike (the status query of a cut-off call renews the
# claim each minute while the acquirer cannot say; that must not hold the payment open): by
# then the call was answered, or it never will be here and the payments sweep asks the
# acquirer's status query about it (payments.services.cutoff); then the payment expires. An
# approval that still comes after that is reversed (payments.services.reversals).
EXPIRY_WAITS_FOR_CALL = CALL_TIME_LIMIT


def _call_in_flight(payment: Payment, now: datetime) -> bool:
    started, waited_since = payment.acquirer_call_started_at, now - EXPIRY_WAITS_FOR_CALL
    return started is not None and started > waited_since and payment.expires_at > waited_since


@transaction.atomic(durable=True)
def payment_cancel_unpaid(*, payment_id: int, reason: str, detail: dict, also=None) -> Payment:
    """PENDING -> FAILED for a payment nobody is paying (a payment link staff cancel), with
    `also(payment)` run in the same transaction (the audit record). Raises InvalidTransition
    once a method is in flight (PROCESSING: the customer may be approving it this moment) or the
    payment is final."""

    def unpaid(payment: Payment) -> None:
        if payment.status != S.PENDING:
            raise InvalidTransition(payment.status, S.FAILED)

    payment = _transition(lock_payment(payment_id), S.FAILED, guard=unpaid, detail=detail,
                          failure_reason=reason[:200])
    if also is not None:
        also(payment)
    return payment


@transaction.atomic(durable=True)
def payment_expire(*, payment_id: int, now: datetime | None = None) -> Payment | None:
    """PENDING or PROCESSING -> EXPIRED, only once `expires_at` has passed. Returns None (and
    changes nothing) when the payment is final already, its deadline was extended, or an
    acquirer call for it is in flight (EXPIRY_WAITS_FOR_CALL)."""
    payment = lock_payment(payment_id)
    now = now or timezone.now()
    if payment.is_final or payment.expires_at > now or _call_in_flight(payment, now):
        return None
    return _transition(payment, S.EXPIRED, detail={"reason": "expired unpaid"})


@transaction.atomic(durable=True)
def payments_expire_batch(*, now: datetime, limit: int) -> int:
    """PENDING or PROCESSING -> EXPIRED for up to `limit` payments whose `expires_at` is at or
    before `now`, most overdue first, in one transaction: for each, what payment_expire does
    (lock, transition check, write, PaymentEvent, payment.expired in the outbox), with one
    statement per table for the lot. Payments held by another transaction are skipped, for the
    next batch; so are those with an acquirer call in flight (EXPIRY_WAITS_FOR_CALL), for a
    later sweep. Returns how many expired."""
    payments = lock_payments_due_for_expiry(now=now, waited_since=now - EXPIRY_WAITS_FOR_CALL, limit=limit)
    if not payments:
        return 0
    completed = timezone.now()
    events = []
    for payment in payments:
        ensure_transition(payment.status, S.EXPIRED)
        events.append(PaymentEvent(payment=payment, kind=PaymentEvent.Kind.STATUS, from_status=payment.status,
                                   to_status=S.EXPIRED, detail={"reason": "expired unpaid"}))
        payment.status, payment.completed_at, payment.updated_at = S.EXPIRED, completed, completed
    Payment.objects.filter(pk__in=[p.pk for p in payments]).update(
        status=S.EXPIRED, completed_at=completed, updated_at=completed)
    payment_events_insert(events)
    for payment in payments:
        on_commit_inc(payments_final.labels(payment.payment_mode or "NONE", S.EXPIRED))
    from webhooks.services import events_record

    events_record([(p.merchant, EVENT_TYPES[S.EXPIRED], webhook_payload(p), p.sabpaisa_txn_id) for p in payments],
                  urls=[p.webhook_url for p in payments])
    return len(payments)


def payment_note(*, payment_id: int, kind: str, detail: dict) -> PaymentEvent:
    """Append a non-status entry (an acquirer answer, a redirect) to a payment's story.
    Append-only, so it needs no lock; never pass card numbers or CVVs in `detail`."""
    return PaymentEvent.objects.create(payment_id=payment_id, kind=kind, detail=detail)
