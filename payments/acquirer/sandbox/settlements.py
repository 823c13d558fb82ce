"""The sandbox's payouts, read back as a real acquirer's settlement report is
(Acquirer.settlements_list / settlement_events), from its own records: SandboxSettlement and
SandboxSettlementEvent (payments.models). A page is PAGE_LIMIT rows; its cursor is the last
row's id, so a walk resumed with it continues exactly where it stopped."""
from __future__ import annotations

from payments.acquirer.base import SettlementEventFound, SettlementFound, SettlementPage
from payments.models import Payment, SandboxSettlement, SandboxSettlementEvent

PAGE_LIMIT = 100


def _after(cursor: str) -> int:
    if not cursor:
        return 0
    if not cursor.isdigit():
        raise ValueError(f"not a sandbox settlement cursor: {cursor!r}")
    return int(cursor)


def _page(rows: list, found) -> SettlementPage:
    more = len(rows) > PAGE_LIMIT
    rows = rows[:PAGE_LIMIT]
    return SettlementPage(items=tuple(found(row) for row in rows), cursor=str(rows[-1].pk) if more else "")


def settlements_page(*, start, end, cursor: str) -> SettlementPage:
    rows = SandboxSettlement.objects.filter(pk__gt=_after(cursor)).order_by("pk")
    if start is not None:
        rows = rows.filter(settled_at__gte=start)
    if end is not None:
        rows = rows.filter(settled_at__lte=end)
    return _page(list(rows[:PAGE_LIMIT + 1]), lambda row: SettlementFound(
        settlement_id=row.settlement_id, utr=row.utr, gross=row.gross, fees=row.fees, tax=row.tax, net=row.net,
        settled_at=row.settled_at, period_start=row.period_start, period_end=row.period_end, status="SETTLED"))


def events_page(*, settlement_id: str, cursor: str) -> SettlementPage:
    rows = (SandboxSettlementEvent.objects.filter(settlement__settlement_id=settlement_id, pk__gt=_after(cursor))
            .order_by("pk"))
    return _page(list(rows[:PAGE_LIMIT + 1]), lambda row: SettlementEventFound(
        event_id=row.event_id, kind=row.kind, amount=row.amount, fee=row.fee, tax=row.tax, order_ref=row.order_ref,
        refund_ref=row.refund_ref, event_type=row.kind.upper()))


def refund_record(*, payment: Payment, amount: int, refund_ref: str) -> None:
    """The sandbox made a refund: the next payout deducts it. Idempotent on the refund's ref
    (a refund submitted again is recorded once)."""
    SandboxSettlementEvent.objects.get_or_create(
        event_id=f"rf_{refund_ref}"[:64],
        defaults={"merchant_id": payment.merchant_id, "kind": "refund", "amount": amount,
                  "order_ref": payment.sabpaisa_txn_id, "refund_ref": refund_ref})
