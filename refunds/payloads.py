"""The refund record as merchants see it (API responses) and as webhooks carry it.

camelCase; every amount is integer paise; times are ISO 8601 UTC ('...Z') or null.
Documented in docs/refunds.md.
"""
from __future__ import annotations

from refunds.models import Refund
from webhooks.payloads import event_timestamp

EVENT_TYPES = {
    Refund.Status.SUCCESS: "refund.processed",
    Refund.Status.FAILED: "refund.failed",
}


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if value else None


MESSAGES = {
    Refund.Status.INITIATED: "refund initiated",
    Refund.Status.SUCCESS: "refund processed by the bank",
}


def refund_message(refund: Refund) -> str:
    """One line on the refund's state, for people (SabPaisa's `message`); FAILED says why."""
    if refund.status == Refund.Status.FAILED:
        return refund.failure_reason or "refund failed"
    return MESSAGES[refund.status]


def refund_record(refund: Refund) -> dict:
    """Our fields, and beside them SabPaisa's names for the same facts (issue 17: SDK 1.0.1 reads
    txnId, amount, originalAmount, bankRefundId, refundedAt and message)."""
    payment = refund.payment
    return {
        "refundId": refund.refund_id,
        "merchantId": refund.merchant.code,
        "sabpaisaTxnId": payment.sabpaisa_txn_id,
        "txnId": payment.sabpaisa_txn_id,
        "paymentId": payment.payment_id,
        "merchantTxnId": payment.merchant_txn_id,
        "refundAmount": refund.amount,
        "amount": refund.amount,
        # What the customer paid: the most that the payment's refunds may add up to.
        "originalAmount": payment.paid_amount or payment.amount,
        "currency": refund.currency,
        "status": refund.status,
        "message": refund_message(refund),
        "reason": refund.reason or None,
        "paymentMode": refund.payment_mode or None,
        "refundMethod": refund.refund_method or None,
        "bankRefundReference": refund.bank_refund_reference or None,
        "bankRefundId": refund.bank_refund_reference or None,
        "failureReason": refund.failure_reason or None,
        "createdAt": _iso(refund.created_at),
        "processedAt": _iso(refund.processed_at),
        "refundedAt": _iso(refund.processed_at),
        "failedAt": _iso(refund.failed_at),
    }


def refund_created_response(refund: Refund) -> dict:
    """The answer to POST /api/v2/refunds ('refund initiated' in the interface). A repeat with
    the same refundId answers the refund as it is now: its message says so."""
    return {"success": True, **refund_record(refund)}


def refund_webhook_payload(refund: Refund, *, paid_amount: int, refunded_amount: int) -> dict:
    """refund.processed / refund.failed: the record, plus the payment's totals after this change,
    and the live SabPaisa webhook's `timestamp` (when the event was recorded, ISO with ms) and
    `idempotency_key`, `<refundId>_<STATUS>` as payments' `<txn_id>_<STATUS>`: a refund reaches
    one final status once, so the key names one event (docs/webhooks.md)."""
    return {
        "event": EVENT_TYPES[refund.status],
        **refund_record(refund),
        "paidAmountPaise": paid_amount,
        "refundedAmount": refunded_amount,
        "timestamp": event_timestamp(),
        "idempotency_key": f"{refund.refund_id}_{refund.status}",
    }
