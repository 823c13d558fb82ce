"""The one place payment rows are locked. Order when several rows are needed: payment, then refund."""
from datetime import datetime

from payments.models import Payment


def lock_payment(payment_id: int) -> Payment:
    # Serialises every status change of one payment: two callbacks racing to finalise it
    # see each other's result instead of both passing the transition check. Refund creation
    # takes this lock too, so concurrent refunds cannot together exceed the paid amount.
    # of=("self",): the merchant row is read, not locked; locking it would queue every
    # payment of one merchant behind each other.
    return Payment.objects.select_for_update(of=("self",)).select_related("merchant").get(pk=payment_id)


def lock_payments_due_for_expiry(*, now: datetime, limit: int) -> list[Payment]:
    """Up to `limit` open payments whose deadline has passed, most overdue first."""
    # The same lock as lock_payment, taken on many rows at once by the expiry sweep.
    # skip_locked: a payment that another transaction holds (being paid this instant, or
    # taken by a sweep running alongside) is left to it; the next batch or sweep comes back.
    # The status and deadline are checked again by PostgreSQL once each row is locked.
    return list(Payment.objects.select_for_update(skip_locked=True, of=("self",)).select_related("merchant")
                .filter(status__in=[Payment.Status.PENDING, Payment.Status.PROCESSING], expires_at__lte=now)
                .order_by("expires_at")[:limit])
