"""Webhook payloads of payment events (documented in docs/webhooks.md and docs/payments.md).

Amounts are integer paise in both payloads: `amount`, `request_amount`, `paid_amount` /
`paidAmountPaise`. (Only enquiry's `paidAmount` is rupees, so no paise figure here is called
`paidAmount`.) The live SabPaisa API sends `request_amount` and `paid_amount` as rupee decimals;
interface.md says paise everywhere and wins (docs/webhooks.md says so in bold).

Both payloads also carry the fields of the live SabPaisa webhook (`upstream_fields`), so a
receiver written from its docs finds what it reads, `idempotency_key` above all.
"""
from payments.models import Payment
from webhooks.payloads import event_timestamp

UDF_KEYS = tuple(f"udf{i}" for i in range(1, 21))

EVENT_TYPES = {
    Payment.Status.SUCCESS: "payment.success",
    Payment.Status.FAILED: "payment.failed",
    Payment.Status.EXPIRED: "payment.expired",
}


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if value else None


def idempotency_key(payment: Payment) -> str:
    """`<txn_id>_<STATUS>`, the live API's form. A payment reaches one final status once, so the
    key names one event; it is in the stored body, the same on every retry and resend."""
    return f"{payment.sabpaisa_txn_id}_{payment.status}"


def upstream_fields(payment: Payment) -> dict:
    """The live SabPaisa webhook's fields (UPSTREAM.md), snake_case, in both flows' payloads.
    `timestamp` is when the event was recorded (this call runs in the transaction that records
    it). `bank_txn_id` is the bank's reference we hold, the RRN, until an acquirer gives us a
    separate one."""
    return {
        "event": EVENT_TYPES[payment.status],
        "txn_id": payment.sabpaisa_txn_id,
        "merchant_txn_id": payment.merchant_txn_id,
        "status": payment.status,
        "request_amount": payment.amount,
        "paid_amount": payment.paid_amount or 0,
        "currency": payment.currency,
        "payment_mode": payment.payment_mode or None,
        "bank_txn_id": payment.bank_rrn or None,
        "bank_rrn": payment.bank_rrn or None,
        "completed_at": _iso(payment.completed_at),
        "timestamp": event_timestamp(),
        "idempotency_key": idempotency_key(payment),
        "udf_data": {key: payment.udf.get(key) for key in UDF_KEYS},
        "metadata": payment.metadata or {},
    }


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
    return {**payload, **upstream_fields(payment)}


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
    # The live API sends one payload for both flows: its fields too, after the interface's.
    return {**payload, **{k: v for k, v in upstream_fields(payment).items() if k not in payload}}


def webhook_payload(payment: Payment) -> dict:
    return s2s_payload(payment) if payment.flow == Payment.Flow.S2S else hosted_payload(payment)
