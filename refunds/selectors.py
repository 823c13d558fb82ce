"""Every read of refunds. Reads a merchant makes are scoped to that merchant: another
merchant's payment or refund is simply not found."""
from __future__ import annotations

from django.db.models import Sum

from gateway.errors import NotFound
from gateway.models import Merchant
from payments.models import Payment
from refunds.models import Refund

S = Refund.Status


def _sum(queryset) -> int:
    return queryset.aggregate(total=Sum("amount"))["total"] or 0


def refunded_amount(payment: Payment) -> int:
    """Paise returned to the customer: the sum of SUCCESS refunds. INITIATED refunds are not
    counted (see refund_pending_amount); FAILED ones never are."""
    return _sum(Refund.objects.filter(payment=payment, status=S.SUCCESS))


def refund_pending_amount(payment: Payment) -> int:
    """Paise accepted for refund that the bank has not confirmed yet (INITIATED refunds)."""
    return _sum(Refund.objects.filter(payment=payment, status=S.INITIATED))


def refund_committed_amount(payment: Payment) -> int:
    """INITIATED plus SUCCESS: what no new refund may take. Exact only under the payment's lock."""
    return _sum(Refund.objects.filter(payment=payment).exclude(status=S.FAILED))


def payment_paid_amount(payment: Payment) -> int:
    return payment.paid_amount or payment.amount


def refundable_amount(payment: Payment) -> int:
    """Paise that may still be refunded: paid, less every refund that has not FAILED."""
    if payment.status != Payment.Status.SUCCESS:
        return 0
    return max(0, payment_paid_amount(payment) - refund_committed_amount(payment))


def payment_get_for_merchant(*, merchant: Merchant, sabpaisa_txn_id: str) -> Payment:
    """The merchant's payment by sabpaisaTxnId. Raises NotFound for another merchant's payment
    exactly as for one that does not exist."""
    payment = Payment.objects.filter(merchant=merchant, sabpaisa_txn_id=sabpaisa_txn_id).first()
    if payment is None:
        raise NotFound(f"no transaction {sabpaisa_txn_id}")
    return payment


def refund_get_for_merchant(*, merchant: Merchant, refund_id: str) -> Refund:
    """The merchant's refund by refundId. Raises NotFound for another merchant's refund."""
    refund = (Refund.objects.select_related("merchant", "payment")
              .filter(merchant=merchant, refund_id=refund_id).first())
    if refund is None:
        raise NotFound(f"no refund {refund_id}")
    return refund


def refunds_for_payment(*, payment: Payment) -> list[Refund]:
    """Every refund of the payment, oldest first."""
    return list(Refund.objects.select_related("merchant", "payment")
                .filter(payment=payment).order_by("created_at", "id"))
