"""Every read of payments. API reads are scoped to one merchant: another merchant's payment
answers NOT_FOUND exactly as a payment that does not exist."""
from __future__ import annotations

import hmac

from gateway.errors import NotFound
from gateway.models import Merchant
from payments.models import Payment


def payment_get_for_merchant(*, merchant: Merchant, merchant_txn_id: str) -> Payment:
    """The merchant's payment (either flow) with that merchantTxnId. Raises NotFound."""
    payment = Payment.objects.filter(merchant=merchant, merchant_txn_id=merchant_txn_id).first()
    if payment is None:
        raise NotFound("no payment with that merchantTxnId")
    return payment


def payment_get_for_checkout(*, payment_id: str, client_secret: str | None) -> Payment | None:
    """The hosted payment `payment_id` if `client_secret` is its session secret, else None.
    Compared in constant time against the stored SHA-256, so the answer's timing says nothing
    about how close a guess was."""
    from payments.services.hosted import client_secret_hash

    if not client_secret or len(client_secret) > 200:
        return None
    payment = (Payment.objects.select_related("merchant")
               .filter(payment_id=payment_id, flow=Payment.Flow.HOSTED).first())
    expected = payment.client_secret_hash if payment is not None else "0" * 64
    if not hmac.compare_digest(expected, client_secret_hash(client_secret)) or payment is None:
        return None
    return payment


def payment_get_hosted(*, payment_id: str) -> Payment:
    """A hosted payment by its paymentId, for pages that already checked the customer's access.
    Raises NotFound."""
    payment = (Payment.objects.select_related("merchant")
               .filter(payment_id=payment_id, flow=Payment.Flow.HOSTED).first())
    if payment is None:
        raise NotFound()
    return payment
