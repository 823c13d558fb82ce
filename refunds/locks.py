"""The one place refund rows are locked. Order when several rows are needed: the payment
(payments.locks.lock_payment) first, then its refunds, so two transactions never wait on
each other in opposite orders."""
from refunds.models import Refund


def lock_refund(refund_pk: int) -> Refund:
    # Serialises every change of one refund: the bank's answer recorded twice (the task and the
    # sweep) sees the first result instead of both passing the transition check.
    # of=("self",): the joined payment and merchant rows are read, not locked, so this never
    # takes the payment's lock out of order.
    return (Refund.objects.select_for_update(of=("self",)).select_related("merchant", "payment")
            .get(pk=refund_pk))


def lock_refund_if_free(refund_pk: int) -> Refund | None:
    # Claiming a refund for submission to the bank: a second worker that finds the row locked
    # skips it rather than queueing behind the first and submitting it again.
    return (Refund.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("merchant", "payment").filter(pk=refund_pk).first())
