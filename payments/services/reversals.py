"""Late approvals, and their reversal through the acquirer.

An approval is late when the acquirer approved (the customer's money moved) but the payment can
no longer take it: it went EXPIRED or FAILED meanwhile (the merchant was told it did not
happen), or the approval is for an attempt the customer abandoned. Nobody should have to notice
it for the customer to get the money back:

- `payment_late_approval_handle` (whoever met the late approval: a hosted step, a UPI approval,
  the status query of a cut-off call, the checkout for an abandoned attempt) records it, in one
  durable transaction under the payment's lock: the approval in the payment's story with its
  RRN (logged at ERROR), and a PENDING Reversal, once per approval however often it is reported.
  The reversal is queued for the worker once that commits.
- `reversal_submit` (the task, and the beat's sweep for whatever a lost message or a dead
  worker left) claims the reversal, asks the acquirer to reverse with no lock held
  (Acquirer.reverse, idempotent on the reversal's id), then records the answer: REVERSED with
  the acquirer's reference, or FAILED (refused: the console's "Needs attention" queue, for a
  person). No answer (an error, a timeout) leaves it PENDING, sent again after a backoff.

Every status change of a reversal is checked against payments.state.REVERSAL_TRANSITIONS and
appended to the payment's story (a PaymentEvent of kind `reversal`). The merchant gets no
webhook for it: the payment's own status does not change (it stays the final status the
merchant heard), and the interface's events are a payment's final statuses (docs/decisions.md).
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from gateway.core.broker import tasks_publish
from gateway.core.errors import ValidationError
from gateway.platform.services import audit_record
from payments.acquirer import get_acquirer
from payments.acquirer.base import CALL_TIME_LIMIT, AcquirerAnswer, AcquirerError, Outcome
from payments.locks import lock_payment, lock_reversal, lock_reversal_if_free
from payments.models import Payment, PaymentEvent, Reversal
from payments.services.acquirer_answers import NEEDS_REVERSAL
from payments.state import InvalidReversalTransition, ensure_reversal_transition

logger = logging.getLogger("payments.reversals")

S = Payment.Status
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


def _event(reversal: Reversal, *, from_status: str = "", to_status: str = "", **detail) -> PaymentEvent:
    return PaymentEvent.objects.create(payment_id=reversal.payment_id, kind=PaymentEvent.Kind.REVERSAL,
                                       from_status=from_status, to_status=to_status,
                                       detail={"reversal": reversal.pk, "approval": reversal.bank_rrn, **detail})


@transaction.atomic(durable=True)
def payment_late_approval_handle(*, payment_id: int, step: str, bank_rrn: str,
                                 abandoned: bool = False) -> Reversal | None:
    """An approval (`bank_rrn`, from the acquirer call `step`) that the payment cannot take:
    record it and have it reversed (the module's docstring). Returns the reversal (the existing
    one when this approval was reported before), or None when there is nothing to give back:
    the payment is SUCCESS and the approval is not said to be for an abandoned attempt (the
    approval that made it SUCCESS, reported twice). `abandoned=True`: the approval is for an
    attempt the customer left (another method, a cancelled UPI request), so it is reversed
    whatever the payment's status, unless it is the very approval the payment succeeded with.
    Call it outside any transaction; the reversal is sent to the acquirer after it commits."""
    if not bank_rrn:
        raise ValueError("a late approval needs its bank reference")
    # The payment's lock: its status cannot change under this decision, and two reports of one
    # approval queue here, the second finding the first's reversal.
    payment = lock_payment(payment_id)
    if payment.status == S.SUCCESS and (not abandoned or payment.bank_rrn == bank_rrn):
        return None
    existing = Reversal.objects.filter(payment=payment, bank_rrn=bank_rrn).first()
    if existing is not None:
        return existing
    logger.error("%s: payment %s is %s but %s was approved with RRN %s", NEEDS_REVERSAL, payment.sabpaisa_txn_id,
                 payment.status, step, bank_rrn)
    PaymentEvent.objects.create(payment=payment, kind=PaymentEvent.Kind.ACQUIRER,
                                detail={"step": step, "outcome": "approved", "reference": bank_rrn,
                                        "result": NEEDS_REVERSAL, "status": payment.status})
    reversal = Reversal.objects.create(payment=payment, step=step[:40], bank_rrn=bank_rrn[:40], amount=payment.amount,
                                       payment_status=payment.status)
    _event(reversal, to_status=R.PENDING, step=step, amount=reversal.amount, paymentStatus=payment.status)
    transaction.on_commit(lambda: _enqueue_submit(reversal.pk))
    return reversal


def _enqueue_submit(reversal_pk: int) -> None:
    """Queue the send to the acquirer. A broker outage only delays it: the sweep finds it."""
    from payments.tasks import reversal_submit_task

    tasks_publish([(reversal_submit_task, (reversal_pk,), None)], what=f"reversal {reversal_pk}",
                  fallback="the reversals sweep will send it")


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
    _event(reversal, action="sent to the acquirer", attempt=reversal.attempts)
    return reversal


@transaction.atomic(durable=True)
def _reversal_error(reversal_pk: int, attempt: int, message: str, now: datetime) -> Reversal:
    reversal = lock_reversal(reversal_pk)
    _event(reversal, action="no answer", attempt=attempt, message=message[:300])
    # Only the latest send's claim is ours to move: after it ran out, the sweep may have sent
    # the reversal again, and that worker holds it now.
    if reversal.status == R.PENDING and reversal.attempts == attempt:
        reversal.next_attempt_at = now + reversal_retry_delay(attempt)
        reversal.save(update_fields=["next_attempt_at", "updated_at"])
    return reversal


@transaction.atomic(durable=True)
def _reversal_transition(reversal_pk: int, target: str, answer: AcquirerAnswer, **fields) -> Reversal:
    reversal = lock_reversal(reversal_pk)
    ensure_reversal_transition(reversal.status, target)
    previous = reversal.status
    reversal.status = target
    reversal.next_attempt_at = None
    reversal.completed_at = timezone.now()
    for name, value in fields.items():
        setattr(reversal, name, value)
    reversal.save()
    _event(reversal, from_status=previous, to_status=target, reference=answer.reference,
           message=answer.message[:300], acquirer=answer.raw)
    return reversal


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
        answer = get_acquirer().reverse(payment=reversal.payment, bank_rrn=reversal.bank_rrn,
                                        amount=reversal.amount, reversal_id=reversal_acquirer_id(reversal))
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
        _event(reversal, action="answer after final", attempt=attempt, outcome=answer.outcome.value,
               reference=answer.reference)
        return reversal
    return _reversal_error(reversal_pk, attempt, f"unexpected acquirer outcome {answer.outcome.value}", now)


@transaction.atomic(durable=True)
def reversal_settle(*, reversal_pk: int, actor, note: str) -> Reversal:
    """A person gave a late approval's money back another way (the acquirer refused the
    reversal, or never answered it): PENDING or FAILED -> SETTLED, with `note` saying how
    (for example the bank transfer's reference). The reversal leaves the console's queue and
    is not sent to the acquirer again; the payment's story and the audit log say who.
    Raises ValidationError without a note, InvalidReversalTransition when it is final."""
    note = (note or "").strip()
    if not note:
        raise ValidationError("say how the money went back to the customer", field="note")
    reversal = lock_reversal(reversal_pk)
    ensure_reversal_transition(reversal.status, R.SETTLED)
    previous = reversal.status
    reversal.status, reversal.note, reversal.settled_by = R.SETTLED, note[:500], actor
    reversal.next_attempt_at, reversal.completed_at = None, timezone.now()
    reversal.save()
    actor_name = actor.get_username()
    _event(reversal, from_status=previous, to_status=R.SETTLED, by=actor_name, note=reversal.note)
    audit_record(actor=actor, action="reversal.settle", obj=reversal, merchant=reversal.payment.merchant,
                 before={"status": previous}, after={"status": R.SETTLED, "note": reversal.note})
    return reversal


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
