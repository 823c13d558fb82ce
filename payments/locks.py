"""The one place payment rows are locked. Order when several rows are needed: payment, then refund."""
from payments.models import Payment


def lock_payment(payment_id: int) -> Payment:
    # Serialises every status change of one payment: two callbacks racing to finalise it
    # see each other's result instead of both passing the transition check. Refund creation
    # takes this lock too, so concurrent refunds cannot together exceed the paid amount.
    # of=("self",): the merchant row is read, not locked; locking it would queue every
    # payment of one merchant behind each other.
    return Payment.objects.select_for_update(of=("self",)).select_related("merchant").get(pk=payment_id)
