"""One pipeline for every acquirer's notices: verified, recorded, de-duplicated, applied, and
answered so that the acquirer delivers again only what failed.

Guarantees, in the order they are met:

- Verified by the acquirer's own package (Acquirer.notice_verify). A delivery that fails is
  refused and nothing is written (an unsigned request cannot fill the table).
- Recorded untrusted first: one AcquirerNotice per delivered body, committed before anything
  acts on it (payments.services.notices). The same body again (a replay inside the window, the
  acquirer's own retry) finds the row: it counts the delivery and changes nothing, unless the
  first delivery's application failed or was cut off (the row is still RECEIVED), in which case
  it is applied now, once.
- Applied through the same transitions as the acquirer's answers: a payment notice by
  payments.services.notices.payment_notice_apply, a refund notice by
  refunds.notices.refund_notice_apply. Both carry the answer the acquirer's status query or
  refund call gives for the same state (the acquirer's package builds both with one function).
- Late (a genuine delivery older than the acquirer's freshness window: NoticeDelivery.fresh is
  False, its own retry of one we did not take): recorded like any other, but nothing it says is
  believed. A payment notice is applied only as the acquirer's status query confirms it
  (Acquirer.notice_confirm, as for a failure); a refund notice is left to the refund's next
  submission by the pending sweep, which reads the refund as it stands at the acquirer.
- A dispute notice (DisputeNotice) opens or moves the dispute through
  refunds.disputes.notices.dispute_notice_apply; delivered late, the dispute is read from the
  processor instead of taking the notice's word.
- A settlement notice (SettlementNotice) stores the settlement it names and reads its events
  from the acquirer (refunds.settlements.fetching.settlement_notice_apply), idempotently on the
  acquirer's ids; delivered late, it is left to the hourly fetch.
- Answered: NoticeNotApplied when the notice is recorded but not applied (the acquirer could not
  be asked to confirm it, or applying it failed), so the door asks for it again.

The refund id at the acquirer is Acquirer.refund_ref of the refund's refundId, as refund()
sends it. A refund notice about a reversal (refund id rev_<pk>, at the payment's acquirer or at
one it failed over from) matches no refund: it is recognised as the reversal's and ignored, the
reversal reading its refund back when it is sent again (payments.services.reversals).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings

from payments.acquirer.base import (
    Acquirer,
    AcquirerUnavailable,
    DisputeNotice,
    PaymentNotice,
    RefundNotice,
    SettlementNotice,
)
from payments.models import AcquirerNotice, Payment, Reversal
from payments.services.notices import (
    notice_not_applied,
    notice_record,
    notice_retake,
    notice_settle,
    notice_step,
    payment_for_order,
    payment_notice_apply,
)
from payments.services.reversal_sending import reversal_acquirer_id
from refunds.disputes.notices import dispute_notice_apply
from refunds.notices import refund_notice_apply
from refunds.settlements.fetching import settlement_notice_apply

logger = logging.getLogger("gateway.inbound")

N = AcquirerNotice.Status


class NoticeNotApplied(Exception):
    """The notice is recorded but could not be applied now: it stays RECEIVED, and the acquirer
    should deliver it again."""


@dataclass(frozen=True)
class NoticeOutcome:
    notice: AcquirerNotice
    duplicate: bool  # True: this body was delivered and applied before; nothing changed


def notice_receive(*, acquirer: Acquirer, headers, raw_body: bytes) -> NoticeOutcome:
    """Verify, record and apply one delivery (the module's docstring). Raises NoticeRejected
    (nothing recorded) or NoticeNotApplied (recorded, to be delivered again)."""
    delivery = acquirer.notice_verify(headers=headers, raw_body=raw_body)
    notice = acquirer.notice_parse(delivery.payload)
    record, first = notice_record(acquirer=acquirer.name, raw_body=raw_body, delivery=delivery,
                                  order_ref=notice.order_ref if notice is not None else "")
    if not first and not notice_retake(record):
        logger.info("%s notice %s (%s) delivered again; %s", acquirer.name, record.pk, record.event_type,
                    record.status)
        return NoticeOutcome(record, duplicate=True)
    try:
        _apply(acquirer, record, notice, fresh=delivery.fresh)
    except Exception as exc:
        notice_not_applied(record, exc)
        if isinstance(exc, AcquirerUnavailable):
            raise NoticeNotApplied(str(exc)) from exc
        raise
    return NoticeOutcome(record, duplicate=False)


def _apply(acquirer: Acquirer, record: AcquirerNotice,
           notice: PaymentNotice | RefundNotice | DisputeNotice | SettlementNotice | None, *,
           fresh: bool) -> None:
    if isinstance(notice, SettlementNotice):
        if not fresh:
            notice_settle(record, N.IGNORED, "delivered late: the hourly settlements fetch reads it from the acquirer")
            return
        settlement, added = settlement_notice_apply(acquirer=acquirer, notice=notice)
        notice_settle(record, N.APPLIED, f"settlement {settlement.processor_settlement_id} stored, {added} new lines")
    elif isinstance(notice, DisputeNotice):
        applied, result, payment = dispute_notice_apply(acquirer=acquirer, notice=notice, fresh=fresh)
        notice_settle(record, N.APPLIED if applied else N.IGNORED, result, payment)
    elif isinstance(notice, PaymentNotice):
        payment_notice_apply(acquirer=acquirer, record=record, notice=notice, confirm=not fresh)
    elif isinstance(notice, RefundNotice) and not fresh:
        notice_settle(record, N.IGNORED, "delivered late: the refund's next submission reads it at the acquirer",
                      payment_for_order(notice.order_ref))
    elif isinstance(notice, RefundNotice):
        _refund(acquirer, record, notice)
    else:
        notice_settle(record, N.IGNORED, f"not a payment or refund notice ({record.event_type or 'no type'})")


def _refund(acquirer: Acquirer, record: AcquirerNotice, notice: RefundNotice) -> None:
    payment = payment_for_order(notice.order_ref)
    if payment is None:
        logger.warning("%s notice %s: no refund %r of order %r", acquirer.name, record.pk, notice.refund_ref,
                       notice.order_ref)
        notice_settle(record, N.IGNORED, "no refund of this gateway has that refund id")
        return
    if acquirer.name != (payment.acquirer or settings.GATEWAY_ACQUIRER):
        reversal = _reversal_named(acquirer, payment, notice.refund_ref)
        result = (_reversal_result(acquirer, reversal) if reversal is not None
                  else "the payment was taken by another acquirer: its refunds go there")
        notice_settle(record, N.IGNORED, result, payment)
        return
    if notice.answer is None:
        notice_settle(record, N.IGNORED, "refund not final yet", payment)
        return
    applied, result = refund_notice_apply(
        payment=payment, notice=notice, source=notice_step(acquirer),
        matches=lambda refund_id: acquirer.refund_ref(refund_id) == notice.refund_ref)
    if not applied and (reversal := _reversal_named(acquirer, payment, notice.refund_ref)) is not None:
        notice_settle(record, N.IGNORED, _reversal_result(acquirer, reversal), payment)
        return
    if not applied:
        logger.warning("%s notice %s: %s (refund %r of order %r)", acquirer.name, record.pk, result,
                       notice.refund_ref, notice.order_ref)
    notice_settle(record, N.APPLIED if applied else N.IGNORED, result, payment)


def _reversal_named(acquirer: Acquirer, payment: Payment, refund_ref: str) -> Reversal | None:
    """The reversal of `payment` sent to `acquirer` (its own, or one it failed over from) that
    the acquirer knows by `refund_ref`, if any. A payment has a reversal or two at most."""
    own = payment.acquirer or settings.GATEWAY_ACQUIRER
    return next((reversal for reversal in Reversal.objects.filter(payment=payment)
                 if (reversal.acquirer or own) == acquirer.name
                 and acquirer.refund_ref(reversal_acquirer_id(reversal)) == refund_ref), None)


def _reversal_result(acquirer: Acquirer, reversal: Reversal) -> str:
    return (f"the refund of reversal {reversal.pk} (approval {reversal.bank_rrn} at {acquirer.name}, "
            f"{reversal.status}): the reversal reads it back when it is sent again")
