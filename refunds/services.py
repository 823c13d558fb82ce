"""Every write on refunds. The only code that creates a refund or changes its status.

- `refund_create` (API and admin): locks the payment, applies the rules (SUCCESS payments
  only, the minimum, never more than the remaining amount), writes the INITIATED refund and its
  first event, and queues its submission to the bank once the transaction commits.
- `refund_submit` (the task and the sweep): claims an INITIATED refund, calls the acquirer with
  no lock held, then records the answer through `refund_mark_processed` / `refund_mark_failed`.
  A bank error backs the refund off; after REFUND_MAX_BANK_ATTEMPTS it is flagged for manual
  review and stays INITIATED (`refund_review_release` gives it another round).
- `refunds_pending_process` (the beat's sweep): submits due refunds, most overdue first.
- `refund_mark_processed` / `refund_mark_failed`: one durable transaction each that locks the
  payment then the refund, checks refunds.state.TRANSITIONS, writes, appends a RefundEvent and
  records the webhook (refund.processed / refund.failed) in the outbox.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from gateway.core.broker import tasks_publish
from gateway.core.errors import DuplicateRefund, RefundAmountExceeded, RefundNotAllowed, ValidationError
from gateway.platform.models import Merchant
from gateway.platform.services import audit_record
from payments.acquirer import get_acquirer
from payments.acquirer.base import AcquirerError, Outcome
from payments.locks import lock_payment
from payments.models import Payment
from payments.services.idempotency import Outcome as IdempotentOutcome
from payments.services.idempotency import idempotency_run, request_fingerprint
from refunds import selectors
from refunds.locks import lock_refund, lock_refund_if_free
from refunds.models import Refund, RefundEvent
from refunds.payloads import EVENT_TYPES, refund_created_response, refund_record, refund_webhook_payload
from refunds.state import InvalidRefundTransition, ensure_transition
from webhooks.services import event_record

logger = logging.getLogger("refunds")

S = Refund.Status

# The smallest refund, in paise (₹1), unless less than that remains to be refunded: then
# exactly the remaining amount is allowed, so every payment can be refunded in full.
REFUND_MIN_AMOUNT = getattr(settings, "REFUND_MIN_AMOUNT", 100)
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

API_ACTOR = "merchant API"
SYSTEM_ACTOR = "system"


def refund_method_for(payment: Payment) -> tuple[str, str]:
    """(payment mode, human description) of how a refund of `payment` goes back: always by the
    payment's original method."""
    mode = payment.payment_mode or ("UPI" if payment.s2s_mode else "")
    if mode == Payment.Mode.CARD:
        return mode, f"original card ****{payment.card_last4}" if payment.card_last4 else "original card"
    if mode == Payment.Mode.UPI:
        return mode, f"original UPI account {payment.payer_vpa}" if payment.payer_vpa else "original UPI account"
    if mode == Payment.Mode.NB:
        return mode, f"original bank account (net banking, {payment.bank_code})" if payment.bank_code \
            else "original bank account (net banking)"
    if mode == Payment.Mode.WALLET:
        return mode, f"original wallet ({payment.bank_code})" if payment.bank_code else "original wallet"
    if mode in (Payment.Mode.NEFT, Payment.Mode.RTGS):
        return mode, f"remitting bank account ({mode})"
    if mode == Payment.Mode.CHALLAN:
        return mode, "payer's bank account (paid by cash challan)"
    return mode, "original payment method"


def request_hash(*, sabpaisa_txn_id: str, amount: int | None, reason: str) -> str:
    """What makes two create requests "the same body" for a repeated refundId: the payment, the
    amount as asked (absent stays absent) and the reason. timestamp and checksum change on
    every honest retry, so they are left out."""
    canonical = json.dumps({"sabpaisaTxnId": sabpaisa_txn_id, "amount": amount, "reason": reason or ""},
                           sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class RefundCreated:
    refund: Refund
    created: bool  # False: an earlier request with the same refundId made it


def _event(refund: Refund, kind: str, *, actor_name: str = SYSTEM_ACTOR, from_status: str = "",
           to_status: str = "", **detail) -> RefundEvent:
    return RefundEvent.objects.create(refund=refund, kind=kind, from_status=from_status, to_status=to_status,
                                      actor_name=actor_name[:150], detail=detail)


def _check_amount(*, amount: int | None, remaining: int) -> int:
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0):
        raise ValidationError("must be a positive integer number of paise", field="refundAmount")
    if remaining <= 0:
        raise RefundAmountExceeded("the payment has already been refunded in full")
    if amount is None:
        return remaining
    if amount > remaining:
        raise RefundAmountExceeded(f"refundAmount {amount} exceeds the refundable amount of {remaining} paise")
    minimum = min(REFUND_MIN_AMOUNT, remaining)
    if amount < minimum:
        raise ValidationError(
            f"must be at least {REFUND_MIN_AMOUNT} paise, or the whole remaining amount when less remains",
            field="refundAmount")
    return amount


def _existing(merchant: Merchant, refund_id: str, fingerprint: str) -> Refund | None:
    refund = (Refund.objects.select_related("merchant", "payment")
              .filter(merchant=merchant, refund_id=refund_id).first())
    if refund is not None and refund.request_hash != fingerprint:
        raise DuplicateRefund(f"refundId {refund_id} was already used with a different request")
    return refund


# Not durable: with X-Idempotency-Key the creation runs inside the transaction that stores
# the response (payments.services.idempotency), so both commit together.
@transaction.atomic
def _refund_create_locked(*, merchant: Merchant, payment_pk: int, amount: int | None, reason: str,
                          refund_id: str | None, source: str, actor, api_key=None) -> RefundCreated:
    # The payment's lock serialises every refund of it: the sum of refunds below cannot change
    # until this transaction ends, so concurrent refunds can never together exceed the amount.
    payment = lock_payment(payment_pk)
    fingerprint = request_hash(sabpaisa_txn_id=payment.sabpaisa_txn_id, amount=amount, reason=reason)
    if refund_id:
        existing = _existing(merchant, refund_id, fingerprint)
        if existing is not None:
            return RefundCreated(existing, created=False)
    if payment.status != Payment.Status.SUCCESS:
        raise RefundNotAllowed(f"only a SUCCESS payment can be refunded; this payment is {payment.status}")
    remaining = selectors.payment_paid_amount(payment) - selectors.refund_committed_amount(payment)
    amount = _check_amount(amount=amount, remaining=remaining)
    mode, method = refund_method_for(payment)
    fields = {"refund_id": refund_id} if refund_id else {}
    refund = Refund.objects.create(
        merchant=merchant, payment=payment, amount=amount, currency=payment.currency, status=S.INITIATED,
        reason=reason or "", payment_mode=mode, refund_method=method, request_hash=fingerprint,
        source=source, initiated_by=actor if getattr(actor, "pk", None) else None,
        api_key_id=getattr(api_key, "pk", None), **fields)
    actor_name = actor.get_username() if getattr(actor, "pk", None) else API_ACTOR
    _event(refund, RefundEvent.Kind.STATUS, actor_name=actor_name, to_status=S.INITIATED,
           amount=amount, source=source, reason=reason or "")
    if source == Refund.Source.ADMIN:
        audit_record(actor=actor, action="refund.initiate", obj=refund, merchant=merchant,
                     after={**refund_record(refund), "refundableBefore": remaining})
    _submit_on_commit(refund.pk)
    return RefundCreated(refund, created=True)


def refund_create(*, merchant: Merchant, payment: Payment, amount: int | None = None, reason: str = "",
                  refund_id: str | None = None, source: str = Refund.Source.API, actor=None,
                  api_key=None) -> RefundCreated:
    """Refund `amount` paise (None: everything still refundable) of the merchant's `payment`,
    by the payment's original method. The refund starts INITIATED and is submitted to the bank
    after the transaction commits.

    With `refund_id`, a repeat of the same request returns the first refund (created=False).
    Raises DuplicateRefund (refund_id used with another request), RefundNotAllowed (the
    payment is not SUCCESS), RefundAmountExceeded (more than remains, or nothing remains),
    ValidationError (not positive, or below the minimum). Staff refunds (source ADMIN, with
    `actor`) are written to the audit log in the same transaction. `api_key`, the key that
    authenticated an API request, is recorded on the refund."""
    if payment.merchant_id != merchant.pk:
        raise ValueError("the payment belongs to another merchant")  # callers scope it first
    kwargs = dict(merchant=merchant, payment_pk=payment.pk, amount=amount, reason=reason or "",
                  refund_id=refund_id, source=source, actor=actor, api_key=api_key)
    try:
        return _refund_create_locked(**kwargs)
    except IntegrityError:
        # Two requests with one refundId on different payments hold different payment locks,
        # so both can pass the repeat check; the unique constraint stopped the second. The
        # first is committed and visible now: answer as a repeat would (the same refund, or
        # DUPLICATE_REFUND).
        if not refund_id:
            raise
        return _refund_create_locked(**kwargs)


def refund_request(*, merchant: Merchant, payment: Payment, amount: int | None, reason: str,
                   refund_id: str | None, idempotency_key: str | None, body: dict,
                   api_key=None) -> IdempotentOutcome:
    """POST /api/v2/refunds once its request is checked: refund_create, at most once per
    X-Idempotency-Key and body (payments.services.idempotency: the same key with the same body
    replays the first response; with another body it is IDEMPOTENCY_MISMATCH; a refused
    request gives the key back). Raises what refund_create raises."""

    def execute() -> tuple[int, dict, Payment]:
        result = refund_create(merchant=merchant, payment=payment, amount=amount, reason=reason,
                               refund_id=refund_id, api_key=api_key)
        return 200, refund_created_response(result.refund), payment

    if idempotency_key is None:
        status, response, _ = execute()
        return IdempotentOutcome(status, response, replayed=False)
    def create(lease) -> tuple[int, dict]:
        # No acquirer call here (the bank is asked after commit), so everything happens inside
        # the transaction that stores the response.
        with lease.transaction():
            status, response, payment = execute()
            lease.store(status, response, payment=payment)
        return status, response

    return idempotency_run(merchant=merchant, key=idempotency_key, fingerprint=request_fingerprint(body),
                           create=create)


def _submit_on_commit(refund_pk: int) -> None:
    transaction.on_commit(lambda: _enqueue_submit(refund_pk))


def _enqueue_submit(refund_pk: int) -> None:
    """Queue the bank submission. A broker outage only delays it: the pending sweep finds it."""
    from refunds.tasks import refund_process

    # One bounded attempt, never raising (gateway.core.broker): the refund stays INITIATED either way.
    tasks_publish([(refund_process, (refund_pk,), None)], what=f"refund {refund_pk}",
                  fallback="the pending sweep will submit it")


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
    _event(refund, RefundEvent.Kind.BANK, action="needs review", attempts=refund.bank_attempts, message=why)
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
    _event(refund, RefundEvent.Kind.BANK, action="submitted", attempt=refund.bank_attempts)
    return refund


@transaction.atomic(durable=True)
def _refund_bank_error(refund_pk: int, attempt: int, message: str, now: datetime | None = None) -> Refund:
    refund = lock_refund(refund_pk)
    _event(refund, RefundEvent.Kind.BANK, action="error", attempt=attempt, message=message[:500])
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
    _event(refund, RefundEvent.Kind.BANK, action="answer after final", attempt=attempt,
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
        answer = get_acquirer().refund(payment=refund.payment, amount=refund.amount, refund_id=refund.refund_id)
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


def _transition(refund_pk: int, target: str, *, detail: dict | None, actor_name: str = SYSTEM_ACTOR,
                **fields) -> Refund:
    payment_pk = Refund.objects.values_list("payment_id", flat=True).get(pk=refund_pk)
    # Payment first, then refund (the lock order): the payment's totals in the webhook payload
    # are then exact, and this never deadlocks with refund_create.
    payment = lock_payment(payment_pk)
    refund = lock_refund(refund_pk)
    ensure_transition(refund.status, target)
    previous = refund.status
    refund.status = target
    refund.claimed_until = None
    refund.needs_review = False  # a final refund has nothing left to review
    for name, value in fields.items():
        setattr(refund, name, value)
    refund.save()
    _event(refund, RefundEvent.Kind.STATUS, actor_name=actor_name, from_status=previous, to_status=target,
           **(detail or {}))
    payload = refund_webhook_payload(refund, paid_amount=selectors.payment_paid_amount(payment),
                                     refunded_amount=selectors.refunded_amount(payment))
    # A payment created with its own webhookUrl (S2S) has its refunds' events sent there too.
    event_record(merchant=refund.merchant, event_type=EVENT_TYPES[target], payload=payload,
                 subject_id=refund.refund_id, url=payment.webhook_url)
    return refund


@transaction.atomic(durable=True)
def refund_mark_processed(*, refund_pk: int, bank_reference: str, detail: dict | None = None) -> Refund:
    """INITIATED -> SUCCESS with the bank's refund reference; records refund.processed.
    Raises InvalidRefundTransition when the refund is already final."""
    if not bank_reference:
        raise ValueError("a processed refund needs the bank's reference")
    return _transition(refund_pk, S.SUCCESS, detail={"bankRefundReference": bank_reference, **(detail or {})},
                       bank_refund_reference=bank_reference[:40], processed_at=timezone.now())


@transaction.atomic(durable=True)
def refund_mark_failed(*, refund_pk: int, reason: str, detail: dict | None = None) -> Refund:
    """INITIATED -> FAILED: the bank refused. The amount becomes refundable again; records
    refund.failed. Raises InvalidRefundTransition when the refund is already final."""
    return _transition(refund_pk, S.FAILED, detail={"failureReason": reason, **(detail or {})},
                       failure_reason=reason[:200], failed_at=timezone.now())


@transaction.atomic(durable=True)
def refund_review_release(*, refund_pk: int, actor) -> Refund:
    """Staff checked a refund flagged for review with the bank and want it submitted again
    (the cause is fixed; the bank has no record of it). Clears the flag, gives it a fresh round
    of REFUND_MAX_BANK_ATTEMPTS submissions and queues the first after commit; the timeline and
    the audit log say who. A refund the bank did settle is recorded with refund_mark_processed /
    refund_mark_failed instead. Raises ValidationError unless the refund is INITIATED and flagged."""
    refund = lock_refund(refund_pk)
    if refund.status != S.INITIATED or not refund.needs_review:
        raise ValidationError("only an INITIATED refund flagged for review can be released", field="refund")
    before = {"needsReview": True, "bankAttempts": refund.bank_attempts}
    refund.needs_review = False
    refund.bank_attempts = 0
    refund.claimed_until = None
    refund.save(update_fields=["needs_review", "bank_attempts", "claimed_until", "updated_at"])
    actor_name = getattr(actor, "get_username", lambda: str(actor or SYSTEM_ACTOR))()
    _event(refund, RefundEvent.Kind.NOTE, actor_name=actor_name, action="review released",
           previous_attempts=before["bankAttempts"])
    audit_record(actor=actor, action="refund.review_release", obj=refund, merchant=refund.merchant,
                 before=before, after={"needsReview": False, "bankAttempts": 0})
    _submit_on_commit(refund.pk)
    return refund


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
