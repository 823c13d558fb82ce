"""The only code that changes a refund's status: `refund_mark_processed` / `refund_mark_failed`, one
durable transaction each that locks the payment then the refund, checks refunds.state.TRANSITIONS,
writes, moves the payment's refund totals, appends a RefundEvent and records the webhook
(refund.processed / refund.failed) in the outbox. And `refund_event`, the one way a refund's
timeline grows, and `refund_totals_follow`, the one rule of the payment's refund totals."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from gateway.core import metrics
from gateway.core.metrics import on_commit_inc
from payments.locks import lock_payment
from payments.models import Payment
from payments.services.refund_totals import payment_refund_totals_move
from refunds import selectors
from refunds.locks import lock_refund
from refunds.models import Refund, RefundEvent
from refunds.payloads import EVENT_TYPES, refund_webhook_payload
from refunds.state import ensure_transition
from webhooks.services import event_record

S = Refund.Status

SYSTEM_ACTOR = "system"


def refund_event(refund: Refund, kind: str, *, actor_name: str = SYSTEM_ACTOR, from_status: str = "",
           to_status: str = "", **detail) -> RefundEvent:
    return RefundEvent.objects.create(refund=refund, kind=kind, from_status=from_status, to_status=to_status,
                                      actor_name=actor_name[:150], detail=detail)


def _share(status: str | None, amount: int) -> tuple[int, int]:
    """What a refund of `amount` paise in `status` adds to its payment's (refunded, pending)."""
    return (amount if status == selectors.REFUNDED_STATUS else 0,
            amount if status == selectors.PENDING_STATUS else 0)


def refund_totals_follow(payment: Payment, refund: Refund, *, before: str | None) -> None:
    """Move the payment's refund totals as `refund` went from status `before` (None: it is new)
    to its status now: refunded counts SUCCESS refunds, pending INITIATED ones, a FAILED refund
    neither. Called under the payment's lock, in the transaction that changed the refund
    (payments.services.refund_totals)."""
    (old_refunded, old_pending), (refunded, pending) = _share(before, refund.amount), _share(refund.status, refund.amount)
    payment_refund_totals_move(payment, refunded=refunded - old_refunded, pending=pending - old_pending)


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
    on_commit_inc(metrics.refunds.labels(target))
    refund_totals_follow(payment, refund, before=previous)
    refund_event(refund, RefundEvent.Kind.STATUS, actor_name=actor_name, from_status=previous, to_status=target,
           **(detail or {}))
    payload = refund_webhook_payload(refund, paid_amount=selectors.payment_paid_amount(payment),
                                     refunded_amount=payment.refunded_amount)
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
