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

from django.db.models import Count, F, QuerySet
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
    """One page of a settlement's lines in the order they were recorded, each with its payment
    and refund (two joins, no query per line)."""
    offset = page * size
    return list(SettlementLine.objects.filter(settlement=settlement).select_related("payment", "refund")
                .order_by("id")[offset:offset + size])
