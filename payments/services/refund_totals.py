"""A payment's refund totals, `Payment.refunded_amount` and `Payment.refund_pending_amount`:
the one write of them, which refunds calls as each of a payment's refunds starts and ends.

refunds stands above payments and owns the rule (refunded: SUCCESS refunds; pending: INITIATED
ones; refunds.transitions applies it), so the amounts flow down as plain values: payments
never reads refunds' table, and whoever reads a payment (the enquiry, the console, a refund's
webhook) has its totals in the row. The caller changes the refund and moves the totals in one
transaction, under the payment's lock, which every refund of the payment takes first
(payments.locks.lock_payment): the totals commit exactly when the refund's change does, and
two refunds never move them at once. tests/conftest.py holds them equal to the sums of the
refunds after every test (refunds.selectors.payments_with_refund_totals_off).
"""
from __future__ import annotations

from django.db import transaction

from payments.models import Payment


def payment_refund_totals_move(payment: Payment, *, refunded: int = 0, pending: int = 0) -> None:
    """Add `refunded` and `pending` paise (negative to take away) to the totals of `payment`,
    locked by the caller in the transaction that changes the refund; the instance is updated
    too. Raises RuntimeError outside a transaction (the totals would commit apart from the
    refund), IntegrityError if a total would fall below zero (payment_refund_totals_not_negative)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("a payment's refund totals move inside the transaction that changes the refund")
    if not refunded and not pending:
        return
    payment.refunded_amount += refunded
    payment.refund_pending_amount += pending
    payment.save(update_fields=["refunded_amount", "refund_pending_amount"])
