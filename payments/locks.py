"""The one place payment rows are locked. Order when several rows are needed: payment, then refund."""
from payments.models import Payment


def lock_payment(payment_id: int) -> Payment:
    # Serialises every status change of one payment: two callbacks racing to finalise it
    # see each other's result instead of both passing the transition check.
    return Payment.objects.select_for_update().select_related("merchant").get(pk=payment_id)
