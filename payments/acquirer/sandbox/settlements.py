"""The sandbox's payouts, read back as a real acquirer's settlement report is
(Acquirer.settlements_list / settlement_events), from its own records: SandboxSettlement and
SandboxSettlementEvent (payments.models). A page is PAGE_LIMIT rows; its cursor is the last
row's id, so a walk resumed with it continues exactly where it stopped."""
from __future__ import annotations

import hashlib
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.utils import timezone

from payments.acquirer import configured_acquirer_named
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


# -- paying out: T+1, its rate card, 18 % GST -------------------------------------------------

# The sandbox's rate card, (basis points, fixed paise) per payment mode: what Indian processors
# typically charge (UPI free for merchants, cards 1.90 %, net banking 1.75 %, wallets 2 %, a
# transfer ₹5). Give a staging merchant the same rows in its fee table (`manage.py sandbox_settle
# --fee-table`) and the reconciliation judges them.
RATE_CARD = {"UPI": (0, 0), "CARD": (190, 0), "NB": (175, 0), "WALLET": (200, 0), "NEFT": (0, 500),
             "RTGS": (0, 500), "CHALLAN": (0, 500)}
GST_PERCENT = 18
IST = ZoneInfo("Asia/Kolkata")
NAME = "sandbox"  # the acquirer's row (payments.acquirer.IMPLEMENTATIONS), as SandboxAcquirer.name
# Paid the next morning in India; the beat pays out any of the last few days not paid yet.
PAYOUT_TIME = time(10, 0)
CATCH_UP_DAYS = 3

# What the staging switch may inject into a payout (docs/sandbox.md), one of each per payout.
FAULTS = ("not_settled", "settled_twice", "amount_mismatch", "fee_mismatch", "tax_not_gst", "refund_mismatch",
          "unknown_reference", "bank_unmatched")


def _half_up(numerator: int, denominator: int) -> int:
    return (numerator + denominator // 2) // denominator


def sandbox_fee(amount: int, mode: str) -> tuple[int, int]:
    """(fee, GST) in paise on a payment of `amount` by `mode`, rounded half up to the paisa."""
    bp, fixed = RATE_CARD.get(mode, RATE_CARD["CARD"])
    fee = _half_up(amount * bp, 10_000) + fixed
    return fee, _half_up(fee * GST_PERCENT, 100)


def _mode(payment: Payment) -> str:
    return payment.payment_mode or ("UPI" if payment.s2s_mode else "")


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time.min, tzinfo=IST)
    return start, start + timedelta(days=1)


def payouts_make(day: date, *, faults: tuple[str, ...] = ()) -> list[SandboxSettlement]:
    """Pay out `day` (an Indian date), T+1: for each merchant with SUCCESS payments completed
    that day, or refunds made by its end and not yet deducted, one payout paid at 10:00 the
    next morning: the payments less the rate card's fee and 18 % GST on it (rounded half up to
    the paisa, per payment), less the refunds. Made once per merchant and day (a second call
    adds nothing). `faults` (staging's switch, docs/sandbox.md) are injected into each payout,
    one of each kind where the payout has what it needs; SandboxSettlement.faults records which."""
    unknown = set(faults) - set(FAULTS)
    if unknown:
        raise ValueError(f"not a sandbox settlement fault: {sorted(unknown)}; known: {', '.join(FAULTS)}")
    start, end = day_bounds(day)
    paid = (Payment.objects.filter(status=Payment.Status.SUCCESS, completed_at__gte=start, completed_at__lt=end)
            .order_by("id"))
    merchants = set(paid.values_list("merchant_id", flat=True))
    merchants |= set(SandboxSettlementEvent.objects.filter(settlement__isnull=True, created_at__lt=end)
                     .values_list("merchant_id", flat=True))
    made = []
    for merchant_id in sorted(merchants):
        if SandboxSettlement.objects.filter(merchant_id=merchant_id, period_start=start).exists():
            continue
        try:
            made.append(_payout(merchant_id, start, end, list(paid.filter(merchant_id=merchant_id)), faults))
        except IntegrityError:
            continue  # another run made it first
    return made


@transaction.atomic
def _payout(merchant_id: int, start: datetime, end: datetime, payments: list[Payment],
            faults: tuple[str, ...]) -> SandboxSettlement:
    settlement_id = f"sbx_{merchant_id}_{start:%Y%m%d}"
    payout = SandboxSettlement.objects.create(
        settlement_id=settlement_id, merchant_id=merchant_id,
        utr="SBXN" + f"{int.from_bytes(hashlib.sha256(settlement_id.encode()).digest()[:8], 'big') % 10**12:012d}",
        period_start=start, period_end=end, gross=0, fees=0, tax=0, net=0,
        settled_at=datetime.combine(start.date() + timedelta(days=1), PAYOUT_TIME, tzinfo=IST))
    events = []
    for payment in payments:
        fee, tax = sandbox_fee(payment.amount, _mode(payment))
        events.append(SandboxSettlementEvent(
            settlement=payout, merchant_id=merchant_id, event_id=f"pay_{payment.sabpaisa_txn_id}", kind="payment",
            amount=payment.amount, fee=fee, tax=tax, order_ref=payment.sabpaisa_txn_id))
    # Serialises with a refund recorded this instant: it is deducted here or by the next payout.
    refunds = list(SandboxSettlementEvent.objects.select_for_update()
                   .filter(merchant_id=merchant_id, settlement__isnull=True, created_at__lt=end))
    modes = {f"pay_{payment.sabpaisa_txn_id}": _mode(payment) for payment in payments}
    applied = _faults_inject(events, refunds, faults, payout, modes)
    SandboxSettlementEvent.objects.bulk_create(events)
    SandboxSettlementEvent.objects.filter(pk__in=[r.pk for r in refunds]).update(settlement=payout)
    payout_events = [*events, *refunds]
    payout.gross = sum(e.amount for e in payout_events if e.kind == "payment")
    payout.fees = sum(e.fee for e in payout_events)
    payout.tax = sum(e.tax for e in payout_events)
    payout.net = payout.gross - payout.fees - payout.tax - sum(e.amount for e in payout_events if e.kind == "refund")
    payout.faults = applied
    payout.save(update_fields=["gross", "fees", "tax", "net", "faults"])
    return payout


def _faults_inject(events: list, refunds: list, faults: tuple[str, ...], payout, modes: dict) -> list[str]:
    """Each fault on a payment of its own (the first ones, in order), so that the
    reconciliation finds each once. Returns the faults applied."""
    applied, spare = [], list(events)
    for fault in faults:
        if fault == "refund_mismatch":
            if refunds:
                twice = refunds[0]
                events.append(SandboxSettlementEvent(
                    settlement=payout, merchant_id=twice.merchant_id, event_id=twice.event_id + "_again", kind="refund",
                    amount=twice.amount, order_ref=twice.order_ref, refund_ref=twice.refund_ref))
                applied.append(fault)
            continue
        if fault == "unknown_reference":
            events.append(SandboxSettlementEvent(
                settlement=payout, merchant_id=payout.merchant_id, event_id=f"stranger_{payout.settlement_id}",
                kind="payment", amount=1_000, fee=20, tax=4, order_ref=f"NOTOURS{payout.pk}"))
            applied.append(fault)
            continue
        if fault == "bank_unmatched":
            applied.append(fault)  # the statement (payout_statement) carries it
            continue
        if not spare:
            continue
        event = spare.pop(0)
        if fault == "not_settled":
            events.remove(event)
        elif fault == "settled_twice":
            events.append(SandboxSettlementEvent(
                settlement=payout, merchant_id=event.merchant_id, event_id=event.event_id + "_again", kind="payment",
                amount=event.amount, fee=event.fee, tax=event.tax, order_ref=event.order_ref))
        elif fault == "amount_mismatch":
            event.amount += 100  # charged at the rate on what it settled: only the amount is off
            event.fee, event.tax = sandbox_fee(event.amount, modes[event.event_id])
        elif fault == "fee_mismatch":
            event.fee += 100
            event.tax = _half_up(event.fee * GST_PERCENT, 100)
        elif fault == "tax_not_gst":
            event.tax += 1
        applied.append(fault)
    return applied


def payout_statement(payouts) -> bytes:
    """The merchant's bank statement of `payouts`, as finance would download it: CSV with the
    columns the reconciliation reads (date, amount, UTR, narration), one credit per payout on
    its payment date, in rupees. A payout carrying the `bank_unmatched` fault arrives ₹1 short."""
    rows = ["date,amount,utr,narration"]
    for payout in payouts:
        amount = payout.net - (100 if "bank_unmatched" in payout.faults else 0)
        sign, amount = ("-", -amount) if amount < 0 else ("", amount)
        rows.append(f"{payout.settled_at.astimezone(IST):%Y-%m-%d},{sign}{amount // 100}.{amount % 100:02d},"
                    f"{payout.utr},NEFT CR SANDBOX SETTLEMENT {payout.settlement_id}")
    return ("\n".join(rows) + "\n").encode()


def payouts_due(*, now: datetime | None = None) -> int:
    """The beat's payouts: every one of the last CATCH_UP_DAYS Indian days not paid out yet,
    when the sandbox is the configured acquirer (otherwise nothing: its payouts would be of
    another acquirer's payments). Returns how many payouts were made."""
    if configured_acquirer_named(NAME) is None:
        return 0
    today = (now or timezone.now()).astimezone(IST).date()
    return sum(len(payouts_make(today - timedelta(days=back))) for back in range(CATCH_UP_DAYS, 0, -1))
