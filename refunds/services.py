"""Every write on refunds. The only code that creates a refund or changes its status.

- `refund_create` (API and admin): locks the payment, applies the rules (SUCCESS payments
  only, the minimum, never more than the remaining amount), writes the INITIATED refund and its
  first event, and queues its submission to the bank once the transaction commits.
- `refund_review_release` (admin): a refund flagged for review gets another round of submissions.
- Submitting to the bank and recording its answer is refunds.submission (`refund_submit`, the
  sweep `refunds_pending_process`); the status changes are refunds.transitions
  (`refund_mark_processed` / `refund_mark_failed`). Both are importable from here too.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from gateway.core.broker import tasks_publish
from gateway.core.metrics import on_commit_inc
from gateway.core.metrics import refunds as refunds_counted
from gateway.core.errors import DuplicateRefund, RefundAmountExceeded, RefundNotAllowed, ValidationError
from gateway.platform.models import Merchant
from gateway.platform.services import audit_record
from payments.locks import lock_payment
from payments.models import Payment
from payments.services.idempotency import Outcome as IdempotentOutcome
from payments.services.idempotency import idempotency_run, request_fingerprint
from refunds import selectors
from refunds.locks import lock_refund
from refunds.models import Refund, RefundEvent
from refunds.payloads import refund_created_response, refund_record
# Submission and the status changes live apart, so that refunds.tasks (queued from here)
# imports nothing that imports it; their names stay part of this module's surface.
from refunds.submission import (  # noqa: F401
    REFUND_CLAIM_SECONDS,
    REFUND_MAX_BANK_ATTEMPTS,
    REFUND_PENDING_SWEEP_AFTER_SECONDS,
    REFUND_RETRY_BASE_SECONDS,
    REFUND_RETRY_MAX_SECONDS,
    SWEEP_BUDGET_SECONDS,
    SWEEP_MAX_REFUNDS,
    refund_retry_delay,
    refund_submit,
    refunds_pending_process,
)
from refunds.tasks import refund_process
from refunds.transitions import (  # noqa: F401
    SYSTEM_ACTOR,
    refund_event,
    refund_mark_failed,
    refund_mark_processed,
    refund_totals_follow,
)

S = Refund.Status

# The smallest refund, in paise (₹1), unless less than that remains to be refunded: then
# exactly the remaining amount is allowed, so every payment can be refunded in full.
REFUND_MIN_AMOUNT = getattr(settings, "REFUND_MIN_AMOUNT", 100)

API_ACTOR = "merchant API"


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
    remaining = selectors.refund_remaining_amount(payment)
    amount = _check_amount(amount=amount, remaining=remaining)
    mode, method = refund_method_for(payment)
    fields = {"refund_id": refund_id} if refund_id else {}
    refund = Refund.objects.create(
        merchant=merchant, payment=payment, amount=amount, currency=payment.currency, status=S.INITIATED,
        reason=reason or "", payment_mode=mode, refund_method=method, request_hash=fingerprint,
        source=source, initiated_by=actor if getattr(actor, "pk", None) else None,
        api_key_id=getattr(api_key, "pk", None), **fields)
    refund_totals_follow(payment, refund, before=None)
    actor_name = actor.get_username() if getattr(actor, "pk", None) else API_ACTOR
    refund_event(refund, RefundEvent.Kind.STATUS, actor_name=actor_name, to_status=S.INITIATED,
           amount=amount, source=source, reason=reason or "")
    if source == Refund.Source.ADMIN:
        audit_record(actor=actor, action="refund.initiate", obj=refund, merchant=merchant,
                     after={**refund_record(refund), "refundableBefore": remaining})
    _submit_on_commit(refund.pk)
    on_commit_inc(refunds_counted.labels(S.INITIATED))
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
    # One bounded attempt, never raising (gateway.core.broker): the refund stays INITIATED either way.
    tasks_publish([(refund_process, (refund_pk,), None)], what=f"refund {refund_pk}",
                  fallback="the pending sweep will submit it")


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
    refund_event(refund, RefundEvent.Kind.NOTE, actor_name=actor_name, action="review released",
           previous_attempts=before["bankAttempts"])
    audit_record(actor=actor, action="refund.review_release", obj=refund, merchant=refund.merchant,
                 before=before, after={"needsReview": False, "bankAttempts": 0})
    _submit_on_commit(refund.pk)
    return refund
