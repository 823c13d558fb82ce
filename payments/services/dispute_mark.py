"""A payment's open dispute, `Payment.open_dispute`: the one write of it, which refunds calls as a
dispute of the payment opens, moves or closes (refunds.disputes.transitions), with plain values,
so that the enquiry reads it from the payment's own row and payments reads nothing of refunds
(as for the refund totals, payments.services.refund_totals)."""
from __future__ import annotations

from django.db import transaction

from payments.models import Payment


def payment_open_dispute_set(payment: Payment, summary: dict | None) -> None:
    """Record `summary` (the newest undecided dispute's disputeId, status, type, amount in paise
    and respondBy, ISO UTC; None: no dispute open) on `payment`, locked by the caller in the
    transaction that changes the dispute. Raises RuntimeError outside a transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("a payment's open dispute is written inside the transaction that changes the dispute")
    if payment.open_dispute == summary:
        return
    payment.open_dispute = summary
    payment.save(update_fields=["open_dispute"])
