"""Cashfree's webhooks about payments and refunds: verified, recorded, then applied.

Guarantees, in the order they are met:

- Verified as Cashfree specifies (webhooks.py): Base64 HMAC-SHA256 of x-webhook-timestamp +
  the raw body, compared in constant time, and at most five minutes old. A delivery that
  fails is refused and nothing is written (an unsigned request cannot fill the table).
- Recorded untrusted first: one AcquirerNotice per delivered body, committed before anything
  acts on it. The same body again (a replay inside the window, Cashfree's own retry) finds the
  row: it counts the delivery and changes nothing, unless the first delivery's application
  failed or was cut off (the row is still RECEIVED), in which case it is applied now, once.
- Applied through the same transitions as an acquirer's answers: a payment notice becomes an
  AcquirerAnswer and goes through payments.services.hosted.step_answer_apply, the function
  that applies the answer to a hosted step and to a cut-off call's status query alike (a
  success: SUCCESS with the bank reference, or a late approval kept and reversed; a failure:
  a failed attempt); a refund notice goes to refunds.notices.refund_notice_apply (through a
  hook refunds fills in), which uses refund_mark_processed / refund_mark_failed, as
  refund_submit's answers do. Each transition checks its table, so
  applying a notice twice changes nothing the second time.

What a notice is trusted with, and why:

- SUCCESS is applied as it says: its signature is Cashfree's, and the gateway's status query
  would ask the same Cashfree. Its amount must be the payment's, or it is ignored (logged as
  an error: someone must look).
- A failure (FAILED, USER_DROPPED, CANCELLED, VOID) is applied only once Cashfree's status
  query of the order confirms it: Cashfree sends failures of every attempt of an order, and
  its own guidance is that only SUCCESS is terminal. The order's payments are read (one call,
  bounded by CONFIRM_TIMEOUT_SECONDS): a success among them is applied as a success; the
  failure is applied only when the newest payment of the order is this one and has failed;
  anything else (a newer attempt in flight) leaves the payment as it is. When the query
  cannot be made, the notice stays RECEIVED and Cashfree is answered 503, so it delivers it
  again; meanwhile the payment's own flow, the sweep or its expiry decide.
- PENDING and NOT_ATTEMPTED are not final: recorded, ignored.

The acquirer's order id is the payment's sabpaisaTxnId (payment_for_order), and the refund id
at Cashfree is acquirer.cashfree_refund_id of the refund's refundId, as CashfreeAcquirer sends
them. A refund notice about a reversal (refund id rev_<pk>) matches no refund and is ignored:
the reversal reads its refund back when it is sent again (payments.services.reversals).
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timezone as dt_timezone
from typing import Any, Mapping

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Now
from django.utils import timezone

from payments.acquirer.base import CALL_TIME_LIMIT, AcquirerAnswer, Outcome
from payments.acquirer.cashfree.acquirer import cashfree_refund_id, client_from_settings
from payments.acquirer.cashfree.errors import CashfreeError
from payments.acquirer.cashfree.money import rupees_to_paise
from payments.acquirer.cashfree.webhooks import TIMESTAMP_HEADER, verify_webhook
from payments.models import AcquirerNotice, Payment
from payments.services.cutoff import STEP_BY_MODE
from payments.services.hosted import step_answer_apply
from payments.state import InvalidTransition

logger = logging.getLogger("payments.acquirer.cashfree")

ACQUIRER = "cashfree"
# The step an inbound notice is recorded as in the payment's story.
NOTICE_STEP = "cashfree_webhook"
# The status query that confirms a failure: short, since Cashfree waits for our answer.
CONFIRM_TIMEOUT_SECONDS = 5.0
FAILED_STATUSES = frozenset({"FAILED", "USER_DROPPED", "CANCELLED", "VOID"})
# A notice left RECEIVED with no result this long ago was being applied by a process that died:
# its next delivery applies it. Applying one takes at most a status query (CALL_TIME_LIMIT).
RETAKE_AFTER = CALL_TIME_LIMIT
N = AcquirerNotice.Status


class NoticeNotApplied(Exception):
    """The notice is recorded but could not be applied now (Cashfree could not be asked to
    confirm it): it stays RECEIVED, and Cashfree should deliver it again."""


@dataclass(frozen=True)
class NoticeOutcome:
    notice: AcquirerNotice
    duplicate: bool  # True: this body was delivered and applied before; nothing changed


def webhook_secret() -> str:
    """The key Cashfree signs webhooks with: CASHFREE_WEBHOOK_SECRET where the account has one,
    else the PG client secret (Cashfree's docs)."""
    return getattr(settings, "CASHFREE_WEBHOOK_SECRET", "") or getattr(settings, "CASHFREE_CLIENT_SECRET", "")


def payment_for_order(order_id: str) -> Payment | None:
    """The payment a Cashfree order is for: the order id is the payment's sabpaisaTxnId."""
    if not order_id:
        return None
    return Payment.objects.select_related("merchant").filter(sabpaisa_txn_id=order_id).first()


# --- receiving --------------------------------------------------------------------------------

def notice_receive(*, headers: Mapping[str, str], raw_body: bytes, now: float | None = None) -> NoticeOutcome:
    """Verify, record and apply one delivery (the module's docstring). Raises
    WebhookVerificationError (nothing recorded) or NoticeNotApplied (recorded, to be delivered
    again)."""
    payload = verify_webhook(secret=webhook_secret(), headers=headers, raw_body=raw_body, now=now)
    lowered = {key.lower(): value for key, value in headers.items()}
    notice, first = _record(payload, raw_body, lowered[TIMESTAMP_HEADER])
    if not first and not _retake(notice):
        logger.info("cashfree notice %s (%s) delivered again; %s", notice.pk, notice.event_type, notice.status)
        return NoticeOutcome(notice, duplicate=True)
    try:
        _apply(notice, payload)
    except Exception as exc:
        # Left RECEIVED, saying why, for the acquirer's next delivery of it to apply (_retake).
        AcquirerNotice.objects.filter(pk=notice.pk, status=N.RECEIVED).update(
            result=f"not applied: {type(exc).__name__}"[:200], updated_at=Now())
        raise
    return NoticeOutcome(notice, duplicate=False)


def _retake(notice: AcquirerNotice) -> bool:
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


def _record(payload: dict, raw_body: bytes, timestamp: str) -> tuple[AcquirerNotice, bool]:
    digest = hashlib.sha256(raw_body).hexdigest()
    data = payload.get("data") if isinstance(payload.get("data"), dict) else {}
    order = data.get("order") if isinstance(data.get("order"), dict) else {}
    refund = data.get("refund") if isinstance(data.get("refund"), dict) else {}
    order_id = str(order.get("order_id") or refund.get("order_id") or "")[:64]
    fields = dict(event_type=str(payload.get("type") or "")[:60], raw_body=raw_body.decode("utf-8", "replace"),
                  sent_at=datetime.fromtimestamp(int(timestamp) / 1000, tz=dt_timezone.utc), order_id=order_id)
    try:
        with transaction.atomic():
            return AcquirerNotice.objects.create(acquirer=ACQUIRER, body_sha256=digest, **fields), True
    except IntegrityError:
        # Delivered before (the unique body): count it; the row's status says what is left to do.
        AcquirerNotice.objects.filter(acquirer=ACQUIRER, body_sha256=digest).update(deliveries=F("deliveries") + 1)
        return AcquirerNotice.objects.get(acquirer=ACQUIRER, body_sha256=digest), False


def _settle(notice: AcquirerNotice, status: str, result: str, payment: Payment | None = None) -> None:
    notice.status, notice.result = status, result[:200]
    if payment is not None:
        notice.payment = payment
    # Only a RECEIVED row is settled: two deliveries applying at once settle it once.
    AcquirerNotice.objects.filter(pk=notice.pk, status=N.RECEIVED).update(
        status=status, result=notice.result, payment=notice.payment)


def _apply(notice: AcquirerNotice, payload: dict) -> None:
    data = payload.get("data") if isinstance(payload.get("data"), dict) else {}
    if isinstance(data.get("refund"), dict):
        _apply_refund(notice, data["refund"])
    elif isinstance(data.get("payment"), dict):
        _apply_payment(notice, data)
    else:
        _settle(notice, N.IGNORED, f"not a payment or refund notice ({notice.event_type or 'no type'})")


# --- payments ---------------------------------------------------------------------------------

def _amount(value: Any) -> int | None:
    try:
        return rupees_to_paise(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _approval(item: Mapping) -> AcquirerAnswer:
    # A successful payment needs a reference: the bank's (UTR / RRN), else Cashfree's payment id.
    reference = str(item.get("bank_reference") or f"cf{item.get('cf_payment_id') or ''}")[:40]
    return AcquirerAnswer(Outcome.APPROVED, reference=reference, message=str(item.get("payment_message") or ""),
                          raw={"cfPaymentId": str(item.get("cf_payment_id") or ""),
                               "cfStatus": str(item.get("payment_status") or ""),
                               "paymentGroup": str(item.get("payment_group") or "")})


def _decline(item: Mapping) -> AcquirerAnswer:
    error = item.get("error_details") if isinstance(item.get("error_details"), Mapping) else {}
    message = str(error.get("error_description") or item.get("payment_message") or "declined")
    return AcquirerAnswer(Outcome.DECLINED, message=message[:200],
                          raw={"cfPaymentId": str(item.get("cf_payment_id") or ""),
                               "cfStatus": str(item.get("payment_status") or ""),
                               "errorCode": str(error.get("error_code") or "")})


def _newest(payments: list) -> Any:
    def key(item):
        digits = item.cf_payment_id
        return (0, int(digits)) if digits.isdigit() else (1, 0)
    return max(payments, key=key) if payments else None


def _confirmed_answer(order_id: str, item: Mapping) -> AcquirerAnswer | None:
    """A failure notice, checked against Cashfree's status query of the order (the module's
    docstring): the answer to apply, or None to leave the payment as it is."""
    try:
        payments = client_from_settings(timeout=CONFIRM_TIMEOUT_SECONDS).get_payments(order_id)
    except (CashfreeError, ValueError) as exc:
        raise NoticeNotApplied(f"Cashfree's status query of order {order_id} failed: {type(exc).__name__}") from exc
    succeeded = [p for p in payments if p.status == "SUCCESS"]
    if succeeded:
        return _approval(succeeded[0].raw)
    newest = _newest(payments)
    if newest is not None and newest.cf_payment_id == str(item.get("cf_payment_id") or "") \
            and newest.status in FAILED_STATUSES:
        return _decline(newest.raw)
    return None


def _apply_payment(notice: AcquirerNotice, data: dict) -> None:
    item = data["payment"]
    payment = payment_for_order(notice.order_id)
    if payment is None:
        logger.warning("cashfree notice %s: no payment for order %r", notice.pk, notice.order_id)
        _settle(notice, N.IGNORED, "no payment of this gateway has that order id")
        return
    status = str(item.get("payment_status") or "")
    if status == "SUCCESS":
        answer = _approval(item)
        if _amount(item.get("payment_amount")) != payment.amount:
            logger.error("cashfree notice %s: payment %s of %s paise reported paid with %r rupees; not applied",
                         notice.pk, payment.sabpaisa_txn_id, payment.amount, item.get("payment_amount"))
            _settle(notice, N.IGNORED, "amount differs from the payment's: not applied", payment)
            return
    elif status in FAILED_STATUSES:
        answer = _confirmed_answer(notice.order_id, item)
        if answer is None:
            _settle(notice, N.IGNORED, f"{status} not confirmed by the status query (a newer attempt)", payment)
            return
    else:
        _settle(notice, N.IGNORED, f"{status or 'no status'} is not final", payment)
        return
    before = payment.status
    step = STEP_BY_MODE.get(payment.payment_mode, "upi_pay")
    try:
        step_answer_apply(payment, step, answer, recorded_as=NOTICE_STEP)
    except InvalidTransition:
        pass  # final already (a late approval is kept and reversed by step_answer_apply)
    payment.refresh_from_db(fields=["status"])
    _settle(notice, N.APPLIED, f"{answer.outcome.value}: payment {before} -> {payment.status}", payment)


# --- refunds ----------------------------------------------------------------------------------

# Refunds sit above payments (refunds -> payments), and Cashfree sends both kinds of notice to
# one address: refunds fills this hook in at app ready (refunds/apps.py) with the function that
# applies a processor's word about one of its refunds (refunds.notices.refund_notice_apply).
_refund_notice_apply = None


def refund_notice_apply_provide(apply) -> None:
    global _refund_notice_apply
    _refund_notice_apply = apply


def _apply_refund(notice: AcquirerNotice, item: dict) -> None:
    if _refund_notice_apply is None:
        raise ImproperlyConfigured("refunds has not provided refund_notice_apply (is the refunds app installed?)")
    payment = payment_for_order(notice.order_id)
    cf_refund_id = str(item.get("refund_id") or "")
    status = str(item.get("refund_status") or "")
    if payment is None:
        logger.warning("cashfree notice %s: no refund %r of order %r", notice.pk, cf_refund_id, notice.order_id)
        _settle(notice, N.IGNORED, "no refund of this gateway has that refund id", payment)
        return
    if status not in ("SUCCESS", "CANCELLED"):
        _settle(notice, N.IGNORED, f"refund {status or 'with no status'} is not final", payment)
        return
    applied, result = _refund_notice_apply(
        payment=payment,
        # The refund whose id at Cashfree this is (acquirer.cashfree_refund_id: ours, or derived
        # from a refundId longer than Cashfree takes).
        matches=lambda refund_id: cashfree_refund_id(refund_id) == cf_refund_id,
        succeeded=status == "SUCCESS",
        amount=_amount(item.get("refund_amount")),
        reference=str(item.get("refund_arn") or f"cf{item.get('cf_refund_id') or ''}"),
        reason=str(item.get("status_description") or "cancelled by Cashfree"),
        detail={"source": NOTICE_STEP, "cfRefundId": str(item.get("cf_refund_id") or ""), "cfStatus": status})
    if not applied:
        logger.warning("cashfree notice %s: %s (refund %r of order %r)", notice.pk, result, cf_refund_id,
                       notice.order_id)
    _settle(notice, N.APPLIED if applied else N.IGNORED, result, payment)
