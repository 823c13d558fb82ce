"""Submitting refunds to the bank and recording its answers (the task, and the beat's sweep):

- `refund_submit` claims an INITIATED refund, calls the acquirer with no lock held, then records
  the answer through refunds.transitions (`refund_mark_processed` / `refund_mark_failed`). A
  bank error backs the refund off; after REFUND_MAX_BANK_ATTEMPTS it is flagged for manual
  review and stays INITIATED (refunds.services.refund_review_release gives it another round).
- `refunds_pending_process` (the beat's sweep): submits due refunds, most overdue first.

Kept apart from refunds.services, which queues refunds.tasks: the tasks import this module,
and nothing here imports them.
"""
from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from payments.acquirer import acquirer_for
from payments.acquirer.base import AcquirerError, Outcome
from refunds.locks import lock_refund, lock_refund_if_free
from refunds.models import Refund, RefundEvent
from refunds.state import InvalidRefundTransition
from refunds.transitions import refund_event, refund_mark_failed, refund_mark_processed

logger = logging.getLogger("refunds")

S = Refund.Status

# How long a worker holds a refund while the bank answers. After that the refund is free again
# for the pending sweep (the worker died, or the bank never answered), which submits it again
# with the same refund id. The acquirer's refund call must therefore time out well within this,
# and be idempotent on the refund id (docs/refunds.md, Processing).
REFUND_CLAIM_SECONDS = getattr(settings, "REFUND_CLAIM_SECONDS", 60)
# The pending sweep submits INITIATED refunds at least this old whose claim is free: their
# processing task was lost (broker outage, worker killed) or the bank call failed.
REFUND_PENDING_SWEEP_AFTER_SECONDS = getattr(settings, "REFUND_PENDING_SWEEP_AFTER_SECONDS", 60)
# After a bank error the refund waits before its next submission, twice as long each time
# (60 s, 2 min, 4 min ... at most an hour), so a few refunds the bank keeps refusing with an
# error never crowd out the others. After REFUND_MAX_BANK_ATTEMPTS submissions without an answer
# it is flagged for manual review and the sweep leaves it alone; it stays INITIATED.
REFUND_RETRY_BASE_SECONDS = getattr(settings, "REFUND_RETRY_BASE_SECONDS", 60)
REFUND_RETRY_MAX_SECONDS = getattr(settings, "REFUND_RETRY_MAX_SECONDS", 3600)
REFUND_MAX_BANK_ATTEMPTS = getattr(settings, "REFUND_MAX_BANK_ATTEMPTS", 10)
SWEEP_MAX_REFUNDS = 100
SWEEP_BUDGET_SECONDS = 30

def refund_retry_delay(attempt: int) -> timedelta:
    """How long a refund waits after its `attempt`-th submission ended in a bank error."""
    return timedelta(seconds=min(REFUND_RETRY_BASE_SECONDS * 2 ** max(attempt - 1, 0), REFUND_RETRY_MAX_SECONDS))


def _flag_for_review(refund: Refund, why: str) -> None:
    """Stop submitting a refund whose outcome the bank never told us. Never FAILED: the money
    may have moved. Called with the refund locked."""
    if refund.needs_review:
        return  # already flagged (a late error answer of the last submission)
    refund.needs_review = True
    refund.save(update_fields=["needs_review", "updated_at"])
    refund_event(refund, RefundEvent.Kind.BANK, action="needs review", attempts=refund.bank_attempts, message=why)
    logger.error("refund %s: %s submissions to the bank got no answer (%s); left INITIATED and flagged for "
                 "manual review", refund.refund_id, refund.bank_attempts, why)


@transaction.atomic(durable=True)
def _refund_claim(refund_pk: int, now: datetime) -> Refund | None:
    refund = lock_refund_if_free(refund_pk)
    if refund is None or refund.status != S.INITIATED or refund.needs_review:
        return None
    if refund.claimed_until is not None and refund.claimed_until > now:
        return None  # another worker is waiting for the bank's answer, or the backoff runs
    if refund.bank_attempts >= REFUND_MAX_BANK_ATTEMPTS:
        # The last submission's worker died (or the bank never answered it): no more attempts.
        _flag_for_review(refund, "the last submission's claim ran out without an answer")
        return None
    refund.bank_attempts += 1
    refund.claimed_until = now + timedelta(seconds=REFUND_CLAIM_SECONDS)
    refund.save(update_fields=["bank_attempts", "claimed_until", "updated_at"])
    refund_event(refund, RefundEvent.Kind.BANK, action="submitted", attempt=refund.bank_attempts)
    return refund


@transaction.atomic(durable=True)
def _refund_bank_error(refund_pk: int, attempt: int, message: str, now: datetime | None = None) -> Refund:
    refund = lock_refund(refund_pk)
    refund_event(refund, RefundEvent.Kind.BANK, action="error", attempt=attempt, message=message[:500])
    # Only the latest submission's claim is ours to change: when this answer comes after the
    # claim ran out, the sweep may have submitted the refund again and that worker now holds it.
    if refund.status == S.INITIATED and refund.bank_attempts == attempt:
        if attempt >= REFUND_MAX_BANK_ATTEMPTS:
            _flag_for_review(refund, message[:200])
        else:
            # Back off, then the sweep submits it again with the same refund id, so a bank that
            # did receive this one treats the retry as a duplicate.
            refund.claimed_until = (now or timezone.now()) + refund_retry_delay(attempt)
            refund.save(update_fields=["claimed_until", "updated_at"])
    return refund


def _refund_late_answer(refund_pk: int, attempt: int, answer) -> Refund:
    """The bank answered a submission of a refund that is already final: the bank was slower
    than the claim, the sweep submitted the refund again, and the other answer was recorded
    first. Nothing changes; the answer goes on the timeline, and is logged as an error when it
    contradicts the recorded outcome (someone must reconcile with the bank)."""
    refund = Refund.objects.get(pk=refund_pk)
    agrees = ((answer.outcome == Outcome.APPROVED and refund.status == S.SUCCESS)
              or (answer.outcome == Outcome.DECLINED and refund.status == S.FAILED))
    refund_event(refund, RefundEvent.Kind.BANK, action="answer after final", attempt=attempt,
           outcome=answer.outcome.value, reference=answer.reference, message=(answer.message or "")[:500])
    if agrees:
        logger.info("refund %s: the bank answered attempt %s again after it was %s", refund.refund_id, attempt,
                    refund.status)
    else:
        logger.error("refund %s is %s but the bank answered attempt %s with %s (reference %r): reconcile it "
                     "with the bank", refund.refund_id, refund.status, attempt, answer.outcome.value,
                     answer.reference)
    return refund


def refund_submit(*, refund_pk: int, now: datetime | None = None) -> Refund | None:
    """Submit an INITIATED refund to the acquirer and record its answer. Returns the refund after
    recording, or None when there was nothing to do (unknown, final, or held by another
    worker). Safe to call twice: only one caller at a time holds the claim.

    No lock is held while the acquirer is called. An acquirer error leaves the refund INITIATED
    for the sweep; a DECLINED answer makes it FAILED, APPROVED makes it SUCCESS. An answer for
    a refund that became final meanwhile (a slow bank answering after the sweep resubmitted it)
    changes nothing and is not an error: it is put on the timeline and the final refund returned."""
    refund = _refund_claim(refund_pk, now or timezone.now())
    if refund is None:
        return None
    attempt = refund.bank_attempts
    started = time.monotonic()
    try:
        answer = acquirer_for(refund.payment).refund(payment=refund.payment, amount=refund.amount, refund_id=refund.refund_id)
    except AcquirerError as exc:
        _warn_if_slower_than_claim(refund, started)
        logger.warning("refund %s: acquirer error %s", refund.refund_id, type(exc).__name__)
        return _refund_bank_error(refund_pk, attempt, f"{type(exc).__name__}: {exc}", now)
    _warn_if_slower_than_claim(refund, started)
    try:
        if answer.outcome == Outcome.APPROVED:
            return refund_mark_processed(refund_pk=refund_pk, bank_reference=answer.reference, detail=answer.raw)
        if answer.outcome == Outcome.DECLINED:
            return refund_mark_failed(refund_pk=refund_pk, reason=answer.message or "declined by the bank",
                                      detail=answer.raw)
    except InvalidRefundTransition:
        return _refund_late_answer(refund_pk, attempt, answer)
    return _refund_bank_error(refund_pk, attempt, f"unexpected acquirer outcome {answer.outcome.value}", now)


def _warn_if_slower_than_claim(refund: Refund, started: float) -> None:
    elapsed = time.monotonic() - started
    if elapsed > REFUND_CLAIM_SECONDS:
        # The claim ran out while we waited, so the sweep may have submitted the refund again:
        # the acquirer's refund call needs a timeout below REFUND_CLAIM_SECONDS.
        logger.warning("refund %s: the acquirer took %.0f s, longer than the %s s claim", refund.refund_id,
                       elapsed, REFUND_CLAIM_SECONDS)


def refunds_pending_process(*, now: datetime | None = None, older_than_seconds: float | None = None,
                            max_refunds: int = SWEEP_MAX_REFUNDS,
                            budget_seconds: float = SWEEP_BUDGET_SECONDS) -> int:
    """The sweep: submit INITIATED refunds older than `older_than_seconds` (default
    REFUND_PENDING_SWEEP_AFTER_SECONDS) that are due (no worker holds them and their backoff
    has passed) and not flagged for review, most overdue first (a refund never submitted is due
    from its creation, one that erred from the end of its backoff), until none is left,
    `max_refunds` were submitted or the budget is spent. Returns how many were submitted.
    Safe to run concurrently with the tasks and with itself (each refund is claimed first)."""
    now = now or timezone.now()
    age = REFUND_PENDING_SWEEP_AFTER_SECONDS if older_than_seconds is None else older_than_seconds
    started = time.monotonic()
    candidates = list(
        Refund.objects.filter(status=S.INITIATED, needs_review=False, created_at__lte=now - timedelta(seconds=age))
        .exclude(claimed_until__gt=now)
        .order_by(Coalesce("claimed_until", "created_at"), "id").values_list("pk", flat=True)[:max_refunds]
    )
    done = 0
    for refund_pk in candidates:
        if time.monotonic() - started > budget_seconds:
            break
        try:
            if refund_submit(refund_pk=refund_pk, now=now) is not None:
                done += 1
        except Exception:  # noqa: BLE001 - one refund's failure must not hold up the others
            # The refund stays INITIATED; its claim runs out and a later sweep submits it again.
            logger.exception("refund pk=%s: submission failed; the sweep carries on with the others", refund_pk)
    return done
