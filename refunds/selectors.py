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


# --- settlements: the merchant API's reads (scoped to one merchant) and finance's console's ----
# Settlements are few (one a day per merchant and acquirer), their lines many (one per
# payment, refund, chargeback and adjustment): lines are always read a page at a time by
# their (settlement, event id) unique index, never all at once. docs/settlements.md.
# (Their imports stand here, with them.)

import re  # noqa: E402

from django.db.models import Count, ExpressionWrapper, IntegerField, OuterRef, QuerySet, Subquery  # noqa: E402

from refunds.models import ReconException, Settlement, SettlementLine  # noqa: E402

# The public id of a settlement: `stl_` and 20 random letters and digits, its own column as a
# refund's id (docs/settlements.md says why).
SETTLEMENT_ID_PATTERN = re.compile(r"^stl_[A-Za-z0-9]{20}$")


def settlement_public_id(settlement: Settlement) -> str:
    return settlement.public_id


@dataclass(frozen=True)
class SettlementPage:
    settlements: list[Settlement]
    total: int  # settlements matching the filters, on every page


def _paid_between(queryset: QuerySet, from_day: date | None, to_day: date | None) -> QuerySet:
    """Settlements paid (settled_at) on or after `from_day` and on or before `to_day`, both
    Asia/Kolkata calendar days and both included. One not yet paid has no day: a date filter
    leaves it out."""
    if from_day is not None:
        queryset = queryset.filter(settled_at__gte=_day_start(from_day))
    if to_day is not None:
        queryset = queryset.filter(settled_at__lt=_day_start(to_day + timedelta(days=1)))
    return queryset


def _newest_first(queryset: QuerySet) -> QuerySet:
    # Paid ones by the day they were paid, newest first; those not yet paid first of all (they
    # are the newest); the id ends the order so that pages never overlap.
    return queryset.order_by(F("settled_at").desc(nulls_first=True), "-id")


def settlements_page_for_merchant(*, merchant: Merchant, from_day: date | None = None, to_day: date | None = None,
                                  page: int = 0, size: int = 20) -> SettlementPage:
    """One page of the merchant's settlements, newest first. Their lines are not counted here: a
    busy merchant's page of settlements has hundreds of thousands (the benchmark,
    benchmarks/console_settlements.py, measured the count as most of the list's time)."""
    queryset = _paid_between(Settlement.objects.filter(merchant=merchant), from_day, to_day)
    offset = page * size
    settlements = list(_newest_first(queryset)[offset:offset + size])
    for settlement in settlements:
        settlement.merchant = merchant  # the record names it: no query per settlement
    # As the refund list: the count only when the page does not show where the list ends.
    if settlements and len(settlements) < size or (not settlements and offset == 0):
        total = offset + len(settlements)
    else:
        total = queryset.count()
    return SettlementPage(settlements, total)


def settlement_get_for_merchant(*, merchant: Merchant, public_id: str) -> Settlement:
    """The merchant's settlement by its public id, with `line_count`. Raises NotFound for
    another merchant's settlement exactly as for one that does not exist."""
    settlement = None
    if SETTLEMENT_ID_PATTERN.fullmatch(public_id):
        settlement = (Settlement.objects.filter(merchant=merchant, public_id=public_id).select_related("merchant")
                      .annotate(line_count=Count("lines")).first())
    if settlement is None:
        raise NotFound(f"no settlement {public_id}")
    return settlement


def settlement_lines_page(*, settlement: Settlement, page: int = 0, size: int = 100) -> list[SettlementLine]:
    """One page of a settlement's lines in the order of the acquirer's event ids (read from the
    (settlement, event id) unique index, however many lines), each with its payment and
    refund (two joins, no query per line)."""
    offset = page * size
    return list(SettlementLine.objects.filter(settlement=settlement).select_related("payment", "refund")
                .order_by("processor_event_id")[offset:offset + size])


# finance's console (gateway.console): every merchant.


OPEN = ReconException.Status.OPEN

# The one rule a settlement's figures obey (refunds.settlements.arithmetic.expected_net), as SQL.
EXPECTED_NET = ExpressionWrapper(
    F("gross") - F("fees") - F("tax") - F("refunds") - F("chargebacks") + F("adjustments"),
    output_field=IntegerField())


def _open_exceptions_count():
    """The settlement's open exceptions, counted by a subquery per settlement shown (the
    queue's (status, ...) index), never a join over every exception."""
    counted = (ReconException.objects.filter(settlement=OuterRef("pk"), status=OPEN).order_by()
               .values("settlement").annotate(n=Count("id")).values("n"))
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def settlements_for_console(*, merchant_code: str | None = None, from_day: date | None = None,
                            to_day: date | None = None, matched: bool | None = None,
                            short: bool = False) -> QuerySet:
    """Every merchant's settlements, newest first, each with its merchant, `open_exceptions`
    and `expected_net`, filtered by merchant, the day paid out (IST), whether a bank credit
    matched it, and `short`: an open exception, no bank credit, or figures that do not add up.
    The caller slices a page."""
    queryset = Settlement.objects.select_related("merchant", "bank_line")
    if merchant_code:
        queryset = queryset.filter(merchant__code=merchant_code)
    queryset = _paid_between(queryset, from_day, to_day)
    if matched is not None:
        queryset = queryset.filter(bank_line__isnull=not matched)
    queryset = queryset.annotate(open_exceptions=_open_exceptions_count(), expected_net=EXPECTED_NET)
    if short:
        # The settlements with an open exception come from the (few) open exceptions, as one
        # hashed set, not from the per-row count above run for every settlement ever paid.
        with_open = ReconException.objects.filter(status=OPEN, settlement__isnull=False).values("settlement_id")
        queryset = queryset.filter(Q(pk__in=with_open) | Q(bank_line__isnull=True) | ~Q(net=F("expected_net")))
    return _newest_first(queryset)


def settlement_for_console(pk: int) -> Settlement | None:
    return (Settlement.objects.select_related("merchant", "bank_line", "bank_line__statement")
            .annotate(line_count=Count("lines"), expected_net=EXPECTED_NET).filter(pk=pk).first())


def settlement_lines_for_console(settlement: Settlement) -> QuerySet:
    """The settlement's lines in the acquirer's event order (its unique index), each with its
    payment and refund; the caller slices a page."""
    return (SettlementLine.objects.filter(settlement=settlement).select_related("payment", "refund")
            .order_by("processor_event_id"))


def settlement_lines_after(settlement: Settlement, *, after: str | None, limit: int) -> list[SettlementLine]:
    """The next `limit` lines after event id `after` (None: from the first), for an export read
    in chunks by its unique index: no server-side cursor, so it works behind a
    transaction-mode pooler (settings.DATABASE_POOLER) and never holds a transaction open."""
    queryset = settlement_lines_for_console(settlement)
    if after is not None:
        queryset = queryset.filter(processor_event_id__gt=after)
    return list(queryset[:limit])


def settlement_exceptions(settlement: Settlement) -> list[ReconException]:
    """Every exception about the settlement or one of its lines, open first, with what each
    names: one query."""
    return list(ReconException.objects.filter(Q(settlement=settlement) | Q(line__settlement=settlement))
                .select_related("settlement", "payment", "refund", "line", "line__settlement", "resolved_by")
                .order_by("-status", "kind", "id")[:200])


def recon_exceptions_for_console(*, status: str | None = OPEN, kind: str | None = None,
                                 merchant_code: str | None = None, settlement_pk: int | None = None) -> QuerySet:
    """The exceptions queue: newest first, each with everything its row names (one query a
    page). status None: open and resolved."""
    queryset = ReconException.objects.select_related("merchant", "settlement", "line", "line__settlement", "payment",
                                                     "refund", "bank_line", "resolved_by")
    if status:
        queryset = queryset.filter(status=status)
    if kind:
        queryset = queryset.filter(kind=kind)
    if merchant_code:
        queryset = queryset.filter(merchant__code=merchant_code)
    if settlement_pk is not None:
        queryset = queryset.filter(settlement_id=settlement_pk)
    return queryset.order_by("-created_at", "-id")


def recon_exception_for_console(pk: int) -> ReconException | None:
    return (ReconException.objects.select_related("merchant", "settlement", "line", "line__settlement", "payment",
                                                  "refund", "bank_line", "bank_line__statement", "resolved_by")
            .filter(pk=pk).first())


def recon_open_counts() -> dict:
    """For the dashboard: open exceptions (capped at 1000) and paid settlements with no bank
    credit matched, each counted over a LIMIT subquery."""
    return {
        "open_exceptions": ReconException.objects.filter(status=OPEN)[:1001].count(),
        "unmatched_settlements": Settlement.objects.exclude(utr="").filter(bank_line__isnull=True)[:1001].count(),
    }


def recon_exception_kinds() -> dict[str, str]:
    """Every kind of exception and its reason in words, in the model's order."""
    return {str(value): str(label) for value, label in ReconException.Kind.choices}


def bank_statement_first_day(statement) -> date | None:
    """The earliest date on a bank statement, None for an empty one."""
    return statement.lines.order_by("date").values_list("date", flat=True).first()
