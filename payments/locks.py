"""The one place payment rows (and their reversals') are locked. Order when several rows are
needed: payment, then refund or reversal."""
from datetime import datetime

from django.db.models import Q

from payments.models import Payment, Reversal


def lock_payment(payment_id: int) -> Payment:
    # Serialises every status change of one payment: two callbacks racing to finalise it
    # see each other's result instead of both passing the transition check. Refund creation
    # takes this lock too, so concurrent refunds cannot together exceed the paid amount.
    # of=("self",): the merchant row is read, not locked; locking it would queue every
    # payment of one merchant behind each other.
    return Payment.objects.select_for_update(of=("self",)).select_related("merchant").get(pk=payment_id)


def lock_payments_due_for_expiry(*, now: datetime, calls_started_before: datetime, limit: int) -> list[Payment]:
    """Up to `limit` open payments whose deadline has passed, most overdue first, less those
    with an acquirer call in flight that started after `calls_started_before`."""
    # The same lock as lock_payment, taken on many rows at once by the expiry sweep.
    # skip_locked: a payment that another transaction holds (being paid this instant, or
    # taken by a sweep running alongside) is left to it; the next batch or sweep comes back.
    # The status, deadline and claim are checked again by PostgreSQL once each row is locked.
    return list(Payment.objects.select_for_update(skip_locked=True, of=("self",)).select_related("merchant")
                .filter(status__in=[Payment.Status.PENDING, Payment.Status.PROCESSING], expires_at__lte=now)
                .filter(Q(acquirer_call_started_at=None) | Q(acquirer_call_started_at__lte=calls_started_before))
                .order_by("expires_at")[:limit])


def lock_reversal(reversal_pk: int) -> Reversal:
    # Serialises every change of one reversal: the acquirer's answer recorded twice (the task
    # and the sweep) sees the first result instead of both passing the transition check.
    # of=("self",): the payment is read, not locked, so this never takes its lock out of order.
    return Reversal.objects.select_for_update(of=("self",)).select_related("payment").get(pk=reversal_pk)


def lock_reversal_if_free(reversal_pk: int) -> Reversal | None:
    # Claiming a reversal to send it to the acquirer: a second worker that finds the row locked
    # passes it by rather than queueing behind the first and sending it again.
    return (Reversal.objects.select_for_update(skip_locked=True, of=("self",)).select_related("payment")
            .filter(pk=reversal_pk).first())
