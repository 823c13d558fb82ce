"""What both enquiry forms return about a payment (docs/hosted-checkout.md, "Enquiry").

Units: `amount` and `amountPaise` are integer paise; `paidAmount` is a number of RUPEES, the one
place the interface puts rupees in a JSON field (STYLE.md), converted by gateway.core.money.

Beside the interface's Transaction, both forms carry what SabPaisa's own enquiry answers with
and its clients read (issue 17; docs/upstream-compat.md): `success`, `txnId` (the same as
sabpaisaTxnId: merchant code fulfils an order only when it is present), `paymentId`,
`merchantId`, `currency`, `customerMobile`, `initiatedAt`, `completedAt`, `bankTxnId` (the
bank's reference, the same as bankRrn) and `traceId`.
"""
from __future__ import annotations

from datetime import datetime
from datetime import timezone as dt_timezone

from gateway.core.money import rupees_number
from gateway.core.tracing import current_trace_id
from payments.models import Payment


def enquiry_payment_mode(payment: Payment) -> str | None:
    """The method the customer paid with: the hosted method, UPI for S2S (UPI_QR and
    UPI_INTENT are both UPI), or None while no method has been chosen."""
    if payment.payment_mode:
        return payment.payment_mode
    if payment.s2s_mode:
        return Payment.Mode.UPI.value
    return None


def enquiry_transaction(payment: Payment) -> dict:
    """The interface's Transaction (GET /api/v2/payments), plus bankRrn, the refunded amounts
    (paise, the payment's own columns, which refunds keeps) and SabPaisa's fields (the module docstring). PROCESSING reads PENDING: the interface's enquiry
    enum has no PROCESSING."""
    return {
        "success": True,
        "sabpaisaTxnId": payment.sabpaisa_txn_id,
        "txnId": payment.sabpaisa_txn_id,
        "paymentId": payment.payment_id,
        "merchantId": payment.merchant.code,
        "merchantTxnId": payment.merchant_txn_id,
        "status": str(payment.enquiry_status),
        "amount": payment.amount,
        "currency": payment.currency,
        "paidAmount": rupees_number(payment.paid_amount or 0),
        "paymentMode": enquiry_payment_mode(payment),
        "customerName": payment.customer_name,
        "customerEmail": payment.customer_email,
        "customerMobile": payment.customer_phone or None,
        "bankRrn": payment.bank_rrn or None,
        "bankTxnId": payment.bank_rrn or None,
        "initiatedAt": _iso(payment.created_at),
        "completedAt": _iso(payment.completed_at),
        # Paise. Refunded = SUCCESS refunds (the bank returned the money); pending = INITIATED ones.
        "refundedAmount": payment.refunded_amount,
        "refundPendingAmount": payment.refund_pending_amount,
        # The newest dispute not yet decided (docs/disputes.md), or null: additive, ignored by
        # clients that do not know it.
        "openDispute": payment.open_dispute,
        "traceId": current_trace_id(),
    }


def _iso(value: datetime | None) -> str | None:
    """UTC, ISO 8601 with milliseconds and Z, or None."""
    if value is None:
        return None
    return value.astimezone(dt_timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def enquiry_body_form(payment: Payment) -> dict:
    """POST /api/v2/payments/enquiry: the Transaction and the body form's own fields
    (amountPaise, paymentMode, bankRrn), so a client written against either form works."""
    return {**enquiry_transaction(payment),
            "amountPaise": payment.amount}
