"""An acquirer's notices (its webhooks) on payments' side: the rows that record them untrusted
first (payments.models.AcquirerNotice), and what a payment notice means for its payment. The
inbound door (gateway/inbound/pipeline.py) runs them, for every acquirer alike.

What a payment notice is trusted with, and why:

- APPROVED is applied as it says: it passed the acquirer's own verification, and the status
  query would ask the same acquirer. Its amount must be the payment's, or it is ignored
  (logged as an error: someone must look).
- DECLINED is applied only as the acquirer's status query confirms it
  (Acquirer.notice_confirm): an acquirer may send failures of every attempt of a payment. A
  success found instead is applied as a success; a newer attempt in flight leaves the payment
  as it is. When the status query cannot be made the notice stays RECEIVED (AcquirerUnavailable
  reaches the door, which asks the acquirer to deliver it again).
- Not final yet: recorded, ignored.
- From an acquirer that is not the payment's own: ignored, unless the payment failed over from
  it (its order there may have been opened, its answer lost). Then an approval, confirmed by
  that acquirer's status query, is given back there (failed_over_notice_apply); the payment
  itself is untouched.
- Delivered late (`confirm`: older than the acquirer's freshness window, NoticeDelivery.fresh),
  an APPROVED notice too is applied only as the status query confirms it: its signature says
  the acquirer sent it, not that it is news (a replay of a captured delivery carries the same
  signature).

An approval or decline goes through payments.services.hosted.step_answer_apply, the function
that applies a hosted step's answer and a cut-off call's status query alike (a success: SUCCESS
with the reference, or a late approval kept and reversed; a failure: a failed attempt). Each
transition checks its table, so applying a notice twice changes nothing the second time.
"""
from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Now
from django.utils import timezone

from payments.acquirer.base import CALL_TIME_LIMIT, Acquirer, NoticeDelivery, Outcome, PaymentNotice
from payments.models import AcquirerNotice, Payment
from payments.services.cutoff import STEP_BY_MODE
from payments.services.hosted import step_answer_apply
from payments.services.reversals import payment_failed_over_approval_handle
from payments.services.routing import failed_over_from
from payments.state import InvalidTransition

logger = logging.getLogger("payments.notices")

N = AcquirerNotice.Status
# A notice left RECEIVED with no result this long ago was being applied by a process that died:
# its next delivery applies it. Applying one takes at most a status query (CALL_TIME_LIMIT).
RETAKE_AFTER = CALL_TIME_LIMIT


def notice_step(acquirer: Acquirer) -> str:
    """The step a notice is recorded as in a payment's story: `<acquirer>_webhook`."""
    return f"{acquirer.name}_webhook"


def payment_for_order(order_ref: str) -> Payment | None:
    """The payment an acquirer's order is: its id there is the payment's sabpaisaTxnId."""
    if not order_ref:
        return None
    return Payment.objects.select_related("merchant").filter(sabpaisa_txn_id=order_ref).first()


# --- the record -----------------------------------------------------------------------------------

def notice_record(*, acquirer: str, raw_body: bytes, delivery: NoticeDelivery,
                  order_ref: str) -> tuple[AcquirerNotice, bool]:
    """One row per delivered body, committed before anything acts on it. Returns the row and
    whether this delivery created it (False: delivered before; its delivery is counted)."""
    digest = hashlib.sha256(raw_body).hexdigest()
    fields = dict(event_type=delivery.event_type[:60], raw_body=raw_body.decode("utf-8", "replace"),
                  sent_at=delivery.sent_at, order_id=order_ref[:64])
    try:
        with transaction.atomic():
            return AcquirerNotice.objects.create(acquirer=acquirer, body_sha256=digest, **fields), True
    except IntegrityError:
        # Delivered before (the unique body): count it; the row's status says what is left to do.
        AcquirerNotice.objects.filter(acquirer=acquirer, body_sha256=digest).update(deliveries=F("deliveries") + 1)
        return AcquirerNotice.objects.get(acquirer=acquirer, body_sha256=digest), False


def notice_retake(notice: AcquirerNotice) -> bool:
    """Whether this delivery of a notice recorded before is to apply it: only one left
    RECEIVED whose application failed (its result says so) or was cut off (untouched for
    RETAKE_AFTER: the process died), and only the delivery whose conditional update takes it,
    so that deliveries arriving together apply it once. Not while the first one is applying."""
    if notice.status != N.RECEIVED:
        return False
    if not notice.result and notice.updated_at > timezone.now() - RETAKE_AFTER:
        return False
    return bool(AcquirerNotice.objects.filter(pk=notice.pk, status=N.RECEIVED, updated_at=notice.updated_at)
                .update(result="", updated_at=Now()))


def notice_settle(notice: AcquirerNotice, status: str, result: str, payment: Payment | None = None) -> None:
    """The notice APPLIED or IGNORED, saying what it changed. Only a RECEIVED row is settled:
    two deliveries applying at once settle it once."""
    notice.status, notice.result = status, result[:200]
    if payment is not None:
        notice.payment = payment
    AcquirerNotice.objects.filter(pk=notice.pk, status=N.RECEIVED).update(
        status=status, result=notice.result, payment=notice.payment)


def notice_not_applied(notice: AcquirerNotice, exc: BaseException) -> None:
    """Left RECEIVED, saying why, for the acquirer's next delivery of it to apply (notice_retake)."""
    AcquirerNotice.objects.filter(pk=notice.pk, status=N.RECEIVED).update(
        result=f"not applied: {type(exc).__name__}"[:200], updated_at=Now())


# --- a payment notice -----------------------------------------------------------------------------

def payment_notice_apply(*, acquirer: Acquirer, record: AcquirerNotice, notice: PaymentNotice,
                         confirm: bool = False) -> None:
    """Apply `notice` (the module's docstring) and settle its `record`; with `confirm` (a late
    delivery) whatever it says is asked of the status query first. Raises AcquirerUnavailable
    when it could not be confirmed (the record stays RECEIVED)."""
    payment = payment_for_order(notice.order_ref)
    if payment is None:
        logger.warning("%s notice %s: no payment for order %r", acquirer.name, record.pk, notice.order_ref)
        notice_settle(record, N.IGNORED, "no payment of this gateway has that order id")
        return
    if acquirer.name != (payment.acquirer or settings.GATEWAY_ACQUIRER):
        if acquirer.name in failed_over_from(payment):
            failed_over_notice_apply(acquirer=acquirer, record=record, notice=notice, payment=payment)
            return
        # Routing sends every call about a payment to the acquirer that took it; a notice of
        # another, where the payment was never attempted, is nobody's (docs/decisions.md, "Two
        # acquirers: routing and safe failover"). Kept, loudly.
        logger.error("%s notice %s: payment %s was taken by %s; not applied", acquirer.name, record.pk,
                     payment.sabpaisa_txn_id, payment.acquirer or settings.GATEWAY_ACQUIRER)
        notice_settle(record, N.IGNORED, f"the payment was taken by {payment.acquirer or 'another acquirer'}", payment)
        return
    answer = notice.answer
    if answer is None:
        notice_settle(record, N.IGNORED, "not final yet", payment)
        return
    if answer.outcome == Outcome.APPROVED and not confirm:
        if notice.amount != payment.amount:
            logger.error("%s notice %s: payment %s of %s paise reported paid with %r paise; not applied",
                         acquirer.name, record.pk, payment.sabpaisa_txn_id, payment.amount, notice.amount)
            notice_settle(record, N.IGNORED, "amount differs from the payment's: not applied", payment)
            return
    else:
        answer = acquirer.notice_confirm(payment=payment, notice=notice)
        if answer is None:
            why = ("delivered late, not confirmed by the status query" if confirm
                   else "a failure not confirmed by the status query (a newer attempt)")
            notice_settle(record, N.IGNORED, why, payment)
            return
    before = payment.status
    step = STEP_BY_MODE.get(payment.payment_mode, "upi_pay")
    try:
        step_answer_apply(payment, step, answer, recorded_as=notice_step(acquirer))
    except InvalidTransition:
        pass  # final already (a late approval is kept and reversed by step_answer_apply)
    payment.refresh_from_db(fields=["status"])
    notice_settle(record, N.APPLIED, f"{answer.outcome.value}: payment {before} -> {payment.status}", payment)


def failed_over_notice_apply(*, acquirer: Acquirer, record: AcquirerNotice, notice: PaymentNotice,
                             payment: Payment) -> None:
    """A notice of `acquirer`, which `payment` failed over from (routing's record of it:
    failed_over_from): its order there may have been opened after all, its answer lost. Only an
    approval matters, and only as that acquirer's own status query confirms it (a webhook alone
    never moves money back): then it is given back there (payment_failed_over_approval_handle),
    once however often it is reported. The payment's own status, webhook and return are the
    other acquirer's and do not change. Raises AcquirerUnavailable when the status query could
    not be made (the record stays RECEIVED, for the acquirer's next delivery)."""
    own = payment.acquirer or settings.GATEWAY_ACQUIRER
    answer = notice.answer
    if answer is None or answer.outcome != Outcome.APPROVED:
        notice_settle(record, N.IGNORED, f"the payment failed over from {acquirer.name} to {own}: "
                                         "nothing approved there", payment)
        return
    confirmed = acquirer.notice_confirm(payment=payment, notice=notice)
    if confirmed is None or confirmed.outcome != Outcome.APPROVED or not confirmed.reference:
        logger.warning("%s notice %s: an approval of payment %s (failed over to %s) its status query does not "
                       "confirm; nothing reversed", acquirer.name, record.pk, payment.sabpaisa_txn_id, own)
        notice_settle(record, N.IGNORED, f"an approval at {acquirer.name} (failed over to {own}) not confirmed "
                                         "by its status query: nothing reversed", payment)
        return
    reversal = payment_failed_over_approval_handle(payment_id=payment.pk, acquirer=acquirer.name,
                                                   step=notice_step(acquirer), bank_rrn=confirmed.reference)
    notice_settle(record, N.APPLIED, f"approved at {acquirer.name} after failing over to {own}: "
                                     f"reversal {reversal.pk} at {acquirer.name}", payment)
