"""Every read of payments. API reads are scoped to one merchant: another merchant's payment
answers NOT_FOUND exactly as a payment that does not exist."""
from __future__ import annotations

import hmac
from dataclasses import dataclass
from functools import lru_cache

from django.db import connection

from gateway.perf import sql
from gateway.core.errors import NotFound
from gateway.platform.models import Merchant
from payments import writes
from payments.models import Payment


def payment_get_for_merchant(*, merchant: Merchant, merchant_txn_id: str) -> Payment:
    """The merchant's payment (either flow) with that merchantTxnId. Raises NotFound."""
    payment = Payment.objects.filter(merchant=merchant, merchant_txn_id=merchant_txn_id).first()
    if payment is None:
        raise NotFound(NOT_FOUND_MESSAGE)
    return payment


def payment_txn_id_taken(*, merchant: Merchant, merchant_txn_id: str) -> bool:
    """Whether the merchant has a payment (either flow) with that merchantTxnId. (Creation with
    an idempotency key asks it inside the statement that takes the key: payments.writes.)"""
    return writes.payment_txn_id_taken(merchant=merchant, merchant_txn_id=merchant_txn_id)


NOT_FOUND_MESSAGE = "no payment with that merchantTxnId"


@dataclass(frozen=True)
class PaymentForEnquiry:
    payment: Payment
    refunded_amount: int  # paise of SUCCESS refunds (refunds.selectors.refunded_amount)
    refund_pending_amount: int  # paise of PENDING refunds (refunds.selectors.refund_pending_amount)


@lru_cache(maxsize=None)
def _enquiry_sql() -> str:
    from refunds.models import Refund

    refunds = connection.ops.quote_name(Refund._meta.db_table)
    total = f"COALESCE((SELECT SUM(r.amount) FROM {refunds} r WHERE r.payment_id = p.id AND r.status = %s), 0)"
    return (f"SELECT {sql.columns(Payment, 'p')}, {total}, {total} "
            f"FROM {connection.ops.quote_name(Payment._meta.db_table)} p "
            "WHERE p.merchant_id = %s AND p.merchant_txn_id = %s")


def payment_get_for_enquiry(*, merchant: Merchant, merchant_txn_id: str) -> PaymentForEnquiry:
    """payment_get_for_merchant and the payment's refunded and pending refund amounts, in one
    statement: enquiry is the API's hottest read, and three ORM queries cost it more CPU to
    compile than PostgreSQL spends answering them (gateway/perf/sql.py). Raises NotFound."""
    from refunds.models import Refund

    with connection.cursor() as cursor:
        cursor.execute(_enquiry_sql(), [Refund.Status.SUCCESS, Refund.Status.INITIATED, merchant.pk, merchant_txn_id])
        row = cursor.fetchone()
    if row is None:
        raise NotFound(NOT_FOUND_MESSAGE)
    payment = sql.instance(Payment, row[:-2])
    payment.merchant = merchant
    return PaymentForEnquiry(payment, int(row[-2]), int(row[-1]))


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
