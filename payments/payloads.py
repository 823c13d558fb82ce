"""Webhook payloads of payment events (documented in docs/webhooks.md and docs/payments.md).

Amounts are integer paise in both payloads: `amount`, `paid_amount` / `paidAmountPaise`. (Only
enquiry's `paidAmount` is rupees, so no paise figure here is called `paidAmount`.)
"""
from payments.models import Payment

UDF_KEYS = tuple(f"udf{i}" for i in range(1, 21))

EVENT_TYPES = {
    Payment.Status.SUCCESS: "payment.success",
    Payment.Status.FAILED: "payment.failed",
    Payment.Status.EXPIRED: "payment.expired",
}


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if value else None


def hosted_payload(payment: Payment) -> dict:
    """Event-style payload of the hosted-checkout flow (snake_case, as the interface names it)."""
    payload = {
        "event": EVENT_TYPES[payment.status],
        "txn_id": payment.sabpaisa_txn_id,
        "payment_id": payment.payment_id,
        "merchant_txn_id": payment.merchant_txn_id,
        "status": payment.status,
        "amount": payment.amount,
        "paid_amount": payment.paid_amount or 0,
        "currency": payment.currency,
        "payment_mode": payment.payment_mode or None,
        "bank_rrn": payment.bank_rrn or None,
        "failure_reason": payment.failure_reason or None,
        "created_at": _iso(payment.created_at),
        "completed_at": _iso(payment.completed_at),
    }
    payload.update({key: payment.udf.get(key) for key in UDF_KEYS})
    return payload


def s2s_payload(payment: Payment) -> dict:
    """S2S UPI payload (camelCase, as the interface names it), udf1..udf20 echoed back."""
    payload = {
        "event": EVENT_TYPES[payment.status],
        "paymentId": payment.payment_id,
        "txnId": payment.sabpaisa_txn_id,
        "merchantTxnId": payment.merchant_txn_id,
        "status": payment.status,
        "amount": payment.amount,
        "paidAmountPaise": payment.paid_amount or 0,
        "currency": payment.currency,
        "paymentMode": payment.s2s_mode,
        "bankRrn": payment.bank_rrn or None,
        "failureReason": payment.failure_reason or None,
        "createdAt": _iso(payment.created_at),
        "completedAt": _iso(payment.completed_at),
    }
    payload.update({key: payment.udf.get(key) for key in UDF_KEYS})
    return payload


def webhook_payload(payment: Payment) -> dict:
    return s2s_payload(payment) if payment.flow == Payment.Flow.S2S else hosted_payload(payment)
