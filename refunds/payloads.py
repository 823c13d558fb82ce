"""The refund record as merchants see it (API responses) and as webhooks carry it.

camelCase; every amount is integer paise; times are ISO 8601 UTC ('...Z') or null.
Documented in docs/refunds.md.
"""
from __future__ import annotations

from refunds.models import Refund
from webhooks.payloads import event_timestamp

EVENT_TYPES = {
    Refund.Status.PROCESSED: "refund.processed",
    Refund.Status.FAILED: "refund.failed",
}


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if value else None


def refund_record(refund: Refund) -> dict:
    payment = refund.payment
    return {
        "refundId": refund.refund_id,
        "merchantId": refund.merchant.code,
        "sabpaisaTxnId": payment.sabpaisa_txn_id,
        "paymentId": payment.payment_id,
        "merchantTxnId": payment.merchant_txn_id,
        "refundAmount": refund.amount,
        "currency": refund.currency,
        "status": refund.status,
        "reason": refund.reason or None,
        "paymentMode": refund.payment_mode or None,
        "refundMethod": refund.refund_method or None,
        "bankRefundReference": refund.bank_refund_reference or None,
        "failureReason": refund.failure_reason or None,
        "createdAt": _iso(refund.created_at),
        "processedAt": _iso(refund.processed_at),
        "failedAt": _iso(refund.failed_at),
    }


def refund_created_response(refund: Refund) -> dict:
    """The answer to POST /api/v2/refunds ('refund initiated' in the interface)."""
    return {"success": True, "message": "refund initiated", **refund_record(refund)}


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
