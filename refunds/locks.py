"""The one place refund rows are locked. Order when several rows are needed: the payment
(payments.locks.lock_payment) first, then its refunds, so two transactions never wait on
each other in opposite orders."""
from refunds.models import ReconException, Refund


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


def lock_recon_exception(exception_pk: int) -> ReconException:
    # Serialises resolving one reconciliation exception: two finance users resolving it at the
    # same moment see each other's resolution instead of both writing a note. Taken alone,
    # never with a payment's or a refund's lock.
    return ReconException.objects.select_for_update(of=("self",)).get(pk=exception_pk)
