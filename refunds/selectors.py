"""Every read of refunds. Reads a merchant makes are scoped to that merchant: another
merchant's payment or refund is simply not found."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import F, Q, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from gateway.core.errors import NotFound
from gateway.platform.models import Merchant
from payments.models import Payment
from refunds.models import Refund

S = Refund.Status


# The rule of a payment's two refund totals, stated once: refunded counts SUCCESS refunds,
# pending counts INITIATED ones; FAILED refunds count in neither. They are columns of the
# payment (Payment.refunded_amount, Payment.refund_pending_amount), moved by
# refunds.transitions.refund_totals_follow as each refund starts and ends, under the payment's
# lock; payments_with_refund_totals_off checks them against the refunds themselves.
REFUNDED_STATUS = S.SUCCESS
PENDING_STATUS = S.INITIATED


def refund_committed_amount(payment: Payment) -> int:
    """INITIATED plus SUCCESS: what no new refund may take. Exact only under the payment's lock."""
    return payment.refunded_amount + payment.refund_pending_amount


def payments_with_refund_totals_off() -> list[tuple[int, int, int, int, int]]:
    """(payment pk, refunded_amount, refund_pending_amount, and the two sums of its refunds) of
    every payment whose totals differ from the sums of its refunds by the rule above: empty when
    the columns are right. Reads every payment: a reconciliation, not a request path."""
    def total(status):
        return Coalesce(Sum("refunds__amount", filter=Q(refunds__status=status)), Value(0))

    return list(Payment.objects.order_by().annotate(refunded=total(REFUNDED_STATUS), pending=total(PENDING_STATUS))
                .exclude(refunded=F("refunded_amount"), pending=F("refund_pending_amount"))
                .values_list("pk", "refunded_amount", "refund_pending_amount", "refunded", "pending"))


def payment_paid_amount(payment: Payment) -> int:
    return payment.paid_amount or payment.amount


def refund_remaining_amount(payment: Payment) -> int:
    """Paid, less every refund that has not FAILED, less what disputes lost or accepted took back
    (refunds.disputes.selectors.payment_disputed_debit): a refund must not return money the
    customer already had back through their bank. Exact only under the payment's lock."""
    from refunds.disputes.selectors import payment_disputed_debit

    return payment_paid_amount(payment) - refund_committed_amount(payment) - payment_disputed_debit(payment)


def refundable_amount(payment: Payment) -> int:
    """Paise that may still be refunded (refund_remaining_amount); 0 unless the payment succeeded."""
    if payment.status != Payment.Status.SUCCESS:
        return 0
    return max(0, refund_remaining_amount(payment))


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


@dataclass(frozen=True)
class RefundPage:
    refunds: list[Refund]
    total: int  # refunds matching the filters, on every page


def _day_start(day: date) -> datetime:
    """00:00 of `day` in settings.TIME_ZONE (Asia/Kolkata): the merchant's calendar day."""
    return datetime.combine(day, time.min, tzinfo=timezone.get_default_timezone())


def refunds_page_for_merchant(*, merchant: Merchant, payment: Payment | None = None, status: str | None = None,
                              from_day: date | None = None, to_day: date | None = None, page: int = 0,
                              size: int = 20) -> RefundPage:
    """One page of the merchant's refunds, filtered by payment, status and creation day (both
    days included, Asia/Kolkata calendar days). A payment's refunds come oldest first, as its
    story reads; the merchant's, newest first. Both orders end on the id, so pages never
    overlap. The indexes (merchant, created_at) and (merchant, status, created_at), or
    (payment, status) with a payment, find the page without reading the merchant's other refunds."""
    queryset = Refund.objects.filter(merchant=merchant)
    if payment is not None:
        queryset = queryset.filter(payment=payment)
    if status is not None:
        queryset = queryset.filter(status=status)
    if from_day is not None:
        queryset = queryset.filter(created_at__gte=_day_start(from_day))
    if to_day is not None:
        queryset = queryset.filter(created_at__lt=_day_start(to_day + timedelta(days=1)))
    order = ("created_at", "id") if payment is not None else ("-created_at", "-id")
    offset = page * size
    refunds = list(queryset.select_related("merchant", "payment").order_by(*order)[offset:offset + size])
    # The count is only needed when the page does not show where the list ends.
    if refunds and len(refunds) < size or (not refunds and offset == 0):
        total = offset + len(refunds)
    else:
        total = queryset.count()
    return RefundPage(refunds, total)


# --- the support console's reads (gateway.console) -------------------------------------------
# Appended here so the console never reads refunds' models itself. Staff see every merchant.
# (Their imports stand here, with them.)

from django.db.models import Prefetch  # noqa: E402

from refunds.models import RefundEvent  # noqa: E402


def refunds_stuck(*, created_before):
    """Refunds not final that are flagged for review or were created before `created_before`,
    oldest first."""
    # INITIATED is the one status that is not final, named as the partial index refund_initiated_created
    # names it: "not SUCCESS or FAILED" is the same rows, but PostgreSQL cannot match it to the
    # index's condition and read every refund instead (issue 30).
    refunds = Refund.objects.select_related("payment", "merchant").filter(status=Refund.Status.INITIATED)
    return (refunds.filter(needs_review=True) | refunds.filter(created_at__lt=created_before)).order_by(
        "created_at", "pk")


def refunds_initiated_before(*, created_before):
    """Refunds still INITIATED (the bank has not answered) created before `created_before`,
    oldest first."""
    return (Refund.objects.filter(status=Refund.Status.INITIATED, created_at__lt=created_before)
            .select_related("merchant", "payment").order_by("created_at"))


def refunds_settled(*, merchant: Merchant, start, end):
    """The merchant's refunds the bank confirmed (SUCCESS) in [start, end), in time order."""
    return (Refund.objects.filter(merchant=merchant, status=Refund.Status.SUCCESS,
                                  processed_at__gte=start, processed_at__lt=end)
            .select_related("payment").order_by("processed_at", "id"))


def refund_payment_pks_by_bank_reference(reference: str) -> list[int]:
    """The payments with a refund whose bank refund reference is `reference`."""
    return list(Refund.objects.filter(bank_refund_reference=reference).values_list("payment_id", flat=True))


def refunds_with_events(*, payment: Payment) -> list[Refund]:
    """The payment's refunds, oldest first, each with its API key and its timeline (events,
    oldest first) in the same two queries."""
    return list(Refund.objects.filter(payment=payment).select_related("api_key").order_by("created_at", "id")
                .prefetch_related(Prefetch("events", queryset=RefundEvent.objects.order_by("created_at", "id"))))
