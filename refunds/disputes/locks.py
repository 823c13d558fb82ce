"""The one place dispute rows are locked. Order, as for refunds (refunds.locks): the payment
(payments.locks.lock_payment) first, then its dispute, since a dispute lost changes what may
still be refunded of the payment, which refund creation reads under the payment's lock."""
from refunds.models import Dispute


def lock_dispute(dispute_pk: int) -> Dispute:
    # Serialises every change of one dispute: the processor's webhook and the sweep's reading of
    # the same change, or a merchant's answer crossing a webhook, see one another's result
    # instead of both passing the transition check. of=("self",): the joined payment and
    # merchant are read, not locked, so the payment's lock is never taken out of order.
    return (Dispute.objects.select_for_update(of=("self",)).select_related("merchant", "payment")
            .get(pk=dispute_pk))
