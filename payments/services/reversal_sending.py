"""Sending a late approval's reversal to the acquirer, and recording its answer (the task, and the
beat's sweep for whatever a lost message or a dead worker left): claim the reversal, ask the
acquirer that approved (reversal_acquirer: the payment's own, or one it failed over from) to
reverse with no lock held (Acquirer.reverse, idempotent on the reversal's id), then
record REVERSED with the acquirer's reference, or FAILED (refused: the console's "Needs
attention" queue, for a person). No answer (an error, a timeout) leaves it PENDING, sent again
after a backoff. How a reversal comes to be: payments.services.reversals.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from payments.acquirer import acquirer_for, acquirer_holding
from payments.acquirer.base import CALL_TIME_LIMIT, AcquirerAnswer, AcquirerError, Outcome
from payments.locks import lock_reversal, lock_reversal_if_free
from payments.models import PaymentEvent, Reversal
from payments.state import InvalidReversalTransition, ensure_reversal_transition

logger = logging.getLogger("payments.reversals")

R = Reversal.Status

# A worker holds a reversal this long while the acquirer answers; after that (it died, or the
# acquirer never answered) the sweep sends it again, with the same id.
REVERSAL_CLAIM = CALL_TIME_LIMIT
# After an error the reversal waits before it is sent again: twice as long each time, at most
# an hour. It is never given up: until the acquirer answers, it stays in the console's queue.
REVERSAL_RETRY_BASE = timedelta(seconds=60)
REVERSAL_RETRY_MAX = timedelta(hours=1)
SWEEP_MAX_REVERSALS = 100


def reversal_retry_delay(attempt: int) -> timedelta:
    """How long a reversal waits after its `attempt`-th send ended in an error."""
    return min(REVERSAL_RETRY_BASE * 2 ** max(attempt - 1, 0), REVERSAL_RETRY_MAX)


def reversal_acquirer_id(reversal: Reversal) -> str:
    """The id the acquirer knows the reversal by: the same on every send of it."""
    return f"rev_{reversal.pk}"


def reversal_acquirer(reversal: Reversal):
    """The acquirer that approved, which the reversal goes to: the payment's own, or the one it
    failed over from (Reversal.acquirer)."""
    return acquirer_holding(reversal.acquirer) if reversal.acquirer else acquirer_for(reversal.payment)


def reversal_event(reversal: Reversal, *, from_status: str = "", to_status: str = "", **detail) -> PaymentEvent:
    # `acquirer` in a reversal's detail is the acquirer's own answer; where it was approved, when
    # not at the payment's acquirer, is `approvedAt`.
    where = {"approvedAt": reversal.acquirer} if reversal.acquirer else {}
    return PaymentEvent.objects.create(payment_id=reversal.payment_id, kind=PaymentEvent.Kind.REVERSAL,
                                       from_status=from_status, to_status=to_status,
                                       detail={"reversal": reversal.pk, "approval": reversal.bank_rrn, **where,
                                               **detail})


@transaction.atomic(durable=True)
def _reversal_claim(reversal_pk: int, now: datetime) -> Reversal | None:
    reversal = lock_reversal_if_free(reversal_pk)
    if reversal is None or reversal.status != R.PENDING:
        return None
    if reversal.next_attempt_at is not None and reversal.next_attempt_at > now:
        return None  # another worker waits for the acquirer, or the backoff runs
    reversal.attempts += 1
    reversal.next_attempt_at = now + REVERSAL_CLAIM
    reversal.save(update_fields=["attempts", "next_attempt_at", "updated_at"])
    reversal_event(reversal, action="sent to the acquirer", attempt=reversal.attempts)
    return reversal


@transaction.atomic(durable=True)
def _reversal_error(reversal_pk: int, attempt: int, message: str, now: datetime) -> Reversal:
    reversal = lock_reversal(reversal_pk)
    reversal_event(reversal, action="no answer", attempt=attempt, message=message[:300])
    # Only the latest send's claim is ours to move: after it ran out, the sweep may have sent
    # the reversal again, and that worker holds it now.
    if reversal.status == R.PENDING and reversal.attempts == attempt:
        reversal.next_attempt_at = now + reversal_retry_delay(attempt)
        reversal.save(update_fields=["next_attempt_at", "updated_at"])
    return reversal


def reversal_status_set(reversal: Reversal, target: str, *, detail: dict, **fields) -> Reversal:
    """The one write of a reversal's status, for the acquirer's answer (below) and a person's
    settlement (payments.services.reversals.reversal_settle): checks
    payments.state.REVERSAL_TRANSITIONS (raises InvalidReversalTransition), ends any claim or
    backoff, stamps `completed_at` (every target is final or waits for a person), sets `fields`,
    saves, and appends the status change with `detail` to the payment's story. The caller holds
    the reversal's lock (payments.locks.lock_reversal) in its transaction."""
    ensure_reversal_transition(reversal.status, target)
    previous = reversal.status
    reversal.status = target
    reversal.next_attempt_at = None
    reversal.completed_at = timezone.now()
    for name, value in fields.items():
        setattr(reversal, name, value)
    reversal.save()
    reversal_event(reversal, from_status=previous, to_status=target, **detail)
    return reversal


@transaction.atomic(durable=True)
def _reversal_transition(reversal_pk: int, target: str, answer: AcquirerAnswer, **fields) -> Reversal:
    return reversal_status_set(lock_reversal(reversal_pk), target, **fields, detail={
        "reference": answer.reference, "message": answer.message[:300], "acquirer": answer.raw})


def reversal_submit(*, reversal_pk: int, now: datetime | None = None) -> Reversal | None:
    """Send a PENDING reversal to the acquirer and record its answer: REVERSED or FAILED.
    Returns the reversal as recorded, or None when there was nothing to do (final, held by
    another worker, or backing off). No lock is held during the call. An error leaves it
    PENDING, to be sent again after reversal_retry_delay; an answer for a reversal that went
    final meanwhile (a slow answer to an earlier send) goes in the story and changes nothing."""
    now = now or timezone.now()
    reversal = _reversal_claim(reversal_pk, now)
    if reversal is None:
        return None
    attempt = reversal.attempts
    try:
        answer = reversal_acquirer(reversal).reverse(payment=reversal.payment, bank_rrn=reversal.bank_rrn,
                                                     amount=reversal.amount,
                                                     reversal_id=reversal_acquirer_id(reversal))
    except AcquirerError as exc:
        logger.warning("reversal %s of payment %s: no answer from the acquirer (%s)", reversal.pk,
                       reversal.payment.sabpaisa_txn_id, type(exc).__name__)
        return _reversal_error(reversal_pk, attempt, f"{type(exc).__name__}: {exc}", now)
    try:
        if answer.outcome == Outcome.APPROVED and answer.reference:
            reversed_ = _reversal_transition(reversal_pk, R.REVERSED, answer, reference=answer.reference[:40])
            logger.info("reversal %s: approval %s of payment %s given back (%s)", reversal.pk, reversal.bank_rrn,
                        reversal.payment.sabpaisa_txn_id, answer.reference)
            return reversed_
        if answer.outcome == Outcome.DECLINED:
            failed = _reversal_transition(reversal_pk, R.FAILED, answer,
                                          failure_reason=(answer.message or "refused by the acquirer")[:200])
            logger.error("reversal %s: the acquirer refused to give back approval %s of payment %s (%s); "
                         "a person must return the money", reversal.pk, reversal.bank_rrn,
                         reversal.payment.sabpaisa_txn_id, answer.message)
            return failed
    except InvalidReversalTransition:
        reversal = Reversal.objects.get(pk=reversal_pk)
        reversal_event(reversal, action="answer after final", attempt=attempt, outcome=answer.outcome.value,
               reference=answer.reference)
        return reversal
    return _reversal_error(reversal_pk, attempt, f"unexpected acquirer outcome {answer.outcome.value}", now)


def reversals_due(now: datetime):
    """PENDING reversals no worker holds and whose backoff has passed, longest waiting first."""
    return (Reversal.objects.filter(status=R.PENDING)
            .filter(Q(next_attempt_at=None) | Q(next_attempt_at__lte=now))
            .order_by(F("next_attempt_at").asc(nulls_first=True), "pk"))


def reversals_pending_process(*, now: datetime | None = None, limit: int = SWEEP_MAX_REVERSALS) -> int:
    """The beat's sweep: send every due reversal (reversals_due), at most `limit`. An error on
    one never stops the others. Returns how many were sent."""
    now = now or timezone.now()
    sent = 0
    for reversal_pk in list(reversals_due(now).values_list("pk", flat=True)[:limit]):
        try:
            sent += reversal_submit(reversal_pk=reversal_pk, now=now) is not None
        except Exception:  # noqa: BLE001 - one bad row must not stop the others
            logger.exception("reversal %s: sending it failed", reversal_pk)
    return sent
