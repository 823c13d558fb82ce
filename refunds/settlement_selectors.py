"""Every read of settlements: the merchant API's (scoped to one merchant: another merchant's
settlement is simply not found) and finance's console (every merchant). docs/settlements.md.

Settlements are few (one a day per merchant and acquirer), their lines many (one per payment,
refund, chargeback and adjustment): lines are always read a page at a time, by their
settlement's foreign-key index, never all at once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from gateway.core.errors import NotFound
from gateway.platform.models import Merchant
from refunds.models import Settlement, SettlementLine

# The public id of a settlement: `stl_` and its row number (docs/settlements.md says why).
SETTLEMENT_ID_PREFIX = "stl_"
SETTLEMENT_ID_PATTERN = re.compile(r"^stl_([1-9][0-9]{0,17})$")


def settlement_public_id(settlement: Settlement) -> str:
    return f"{SETTLEMENT_ID_PREFIX}{settlement.pk}"


def settlement_pk_of(public_id: str) -> int | None:
    """The row number a public id names, or None when it is not one of ours in form."""
    match = SETTLEMENT_ID_PATTERN.fullmatch(public_id)
    return int(match.group(1)) if match else None


def _day_start(day: date) -> datetime:
    """00:00 of `day` in settings.TIME_ZONE (Asia/Kolkata), as the refund list counts days."""
    return datetime.combine(day, time.min, tzinfo=timezone.get_default_timezone())


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
    """One page of the merchant's settlements, newest first, each with `line_count` (its lines,
    counted in the same query)."""
    queryset = _paid_between(Settlement.objects.filter(merchant=merchant), from_day, to_day)
    offset = page * size
    settlements = list(_newest_first(queryset.annotate(line_count=Count("lines")))[offset:offset + size])
    # As the refund list: the count only when the page does not show where the list ends.
    if settlements and len(settlements) < size or (not settlements and offset == 0):
        total = offset + len(settlements)
    else:
        total = queryset.count()
    return SettlementPage(settlements, total)


def settlement_get_for_merchant(*, merchant: Merchant, public_id: str) -> Settlement:
    """The merchant's settlement by its public id, with `line_count`. Raises NotFound for
    another merchant's settlement exactly as for one that does not exist."""
    pk = settlement_pk_of(public_id)
    settlement = None
    if pk is not None:
        settlement = (Settlement.objects.filter(merchant=merchant, pk=pk).select_related("merchant")
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


# --- finance's console (gateway.console): every merchant ------------------------------------
# (Their imports stand here, with them.)

from django.db.models import ExpressionWrapper, IntegerField, OuterRef, Subquery  # noqa: E402
from django.db.models.functions import Coalesce  # noqa: E402

from refunds.models import ReconException  # noqa: E402

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
        queryset = queryset.filter(Q(open_exceptions__gt=0) | Q(bank_line__isnull=True) | ~Q(net=F("expected_net")))
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
                .select_related("payment", "refund", "line", "resolved_by")
                .order_by("-status", "kind", "id")[:200])


def recon_exceptions_for_console(*, status: str | None = OPEN, kind: str | None = None,
                                 merchant_code: str | None = None, settlement_pk: int | None = None) -> QuerySet:
    """The exceptions queue: newest first, each with everything its row names (one query a
    page). status None: open and resolved."""
    queryset = ReconException.objects.select_related("merchant", "settlement", "line", "payment", "refund",
                                                     "bank_line", "resolved_by")
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
