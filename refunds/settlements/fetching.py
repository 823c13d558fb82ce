"""Fetching an acquirer's settlements and their events into Settlement / SettlementLine rows,
through the protocol (Acquirer.settlements_list, Acquirer.settlement_events): the same code for
every acquirer, which hands it neutral values (payments.acquirer.base.SettlementFound,
SettlementEventFound).

Resumable: the walk over the report's pages is kept in a SettlementFetch row per acquirer; the
cursor of the next page is written after each page is stored, so a fetch cut short (a
timeout, a worker killed) continues from there next time, and a walk finishes before a new
period is started. Idempotent on the acquirer's ids: a settlement is keyed by (acquirer,
settlement id) and a line by (settlement, event id), so reading a page again, or an
overlapping period, adds nothing twice (the unique constraints are the final word). No call
to the acquirer is made inside a transaction: each page is fetched first, then stored in one
short transaction. A cursor sent back a second time ends the walk (a server that repeats
itself must not keep a worker for ever).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from gateway.core.transactions import ensure_no_transaction
from payments.acquirer.base import Acquirer, SettlementEventFound, SettlementFound, SettlementNotice
from payments.models import Payment
from refunds.models import Dispute, Refund, Settlement, SettlementFetch, SettlementLine
from refunds.settlements.arithmetic import settlement_sums, totals_of

logger = logging.getLogger(__name__)

MAX_PAGES = 10_000  # 1,000,000 settlements at 100 a page: far past any real account's day


@dataclass
class FetchResult:
    settlements_added: int = 0
    lines_added: int = 0
    pages_read: int = 0


def settlements_fetch(acquirer: Acquirer, *, start: datetime | None = None, end: datetime | None = None,
                      max_pages: int = MAX_PAGES) -> FetchResult:
    """Store every settlement `acquirer` reports between `start` and `end`, with its events,
    first finishing a walk an earlier fetch left unfinished. At most `max_pages` pages of
    settlements are read in one call; the rest is read by the next. Call it outside any
    transaction. Raises what the acquirer raises (AcquirerUnavailable ...): what was stored
    stays, and the next fetch resumes from the page that failed."""
    ensure_no_transaction()
    result = FetchResult()
    state, _ = SettlementFetch.objects.get_or_create(acquirer=acquirer.name)
    if state.cursor:
        _walk(acquirer, state, result, max_pages)  # the unfinished walk first, over its own period
        if state.cursor:
            return result
    SettlementFetch.objects.filter(pk=state.pk).update(window_start=start, window_end=end, cursor="", pages_read=0)
    state.window_start, state.window_end = start, end
    _walk(acquirer, state, result, max_pages - result.pages_read)
    logger.info("settlements fetched", extra={"acquirer": acquirer.name, "settlements_added": result.settlements_added,
                                              "lines_added": result.lines_added, "pages": result.pages_read})
    return result


def _walk(acquirer: Acquirer, state: SettlementFetch, result: FetchResult, max_pages: int) -> None:
    seen: set[str] = set()
    for _ in range(max(max_pages, 0)):
        page = acquirer.settlements_list(start=state.window_start, end=state.window_end, cursor=state.cursor)
        result.pages_read += 1
        for found in page.items:
            settlement, created = _settlement_store(acquirer.name, found)
            result.settlements_added += created
            if created or not _lines_sum(settlement):
                result.lines_added += _lines_fetch(acquirer, settlement)
        finished = not page.cursor or page.cursor in seen or not page.items
        seen.add(page.cursor)
        state.cursor = "" if finished else page.cursor
        fields = {"cursor": state.cursor, "pages_read": state.pages_read + 1}
        if finished:
            # An open period (end None) was read up to now: the reconciliation's not_settled
            # judges a payment only once its acquirer's report is read past its due date.
            fields["finished_until"] = state.finished_until = state.window_end or timezone.now()
        SettlementFetch.objects.filter(pk=state.pk).update(**fields)
        state.pages_read = fields["pages_read"]
        if finished:
            return


def _settlement_store(acquirer_name: str, found: SettlementFound) -> tuple[Settlement, bool]:
    with transaction.atomic():
        return Settlement.objects.get_or_create(
            acquirer=acquirer_name, processor_settlement_id=found.settlement_id,
            defaults={"utr": found.utr, "gross": found.gross or 0, "fees": found.fees, "tax": found.tax,
                      "net": found.net or 0, "settled_at": found.settled_at, "period_start": found.period_start,
                      "period_end": found.period_end, "status": found.status})


def _lines_sum(settlement: Settlement) -> bool:
    """Whether the lines stored already add up to the settlement's own figures: then the
    acquirer's events are not read again (they are all here)."""
    totals = totals_of(settlement.lines.values_list("kind", "amount", "fee", "tax"))
    return (totals.gross, totals.fees, totals.tax) == (settlement.gross, settlement.fees, settlement.tax) \
        and settlement_sums(totals, settlement.net)


def _lines_fetch(acquirer: Acquirer, settlement: Settlement) -> int:
    added, cursor, seen = 0, "", set()
    for _ in range(MAX_PAGES):
        page = acquirer.settlement_events(settlement_id=settlement.processor_settlement_id, cursor=cursor)
        added += lines_store(acquirer, settlement, page.items)
        if not page.cursor or page.cursor in seen or not page.items:
            break
        seen.add(page.cursor)
        cursor = page.cursor
    return added


def lines_store(acquirer: Acquirer, settlement: Settlement, events) -> int:
    """One page of events in one transaction, linked to our payments by the order ref (our
    sabpaisa_txn_id), only to payments this acquirer took (_payments_of), and to our refunds by the ref the acquirer knows them by
    (Acquirer.refund_ref). Returns how many lines were new."""
    events: list[SettlementEventFound] = list(events)
    order_refs = {event.order_ref for event in events if event.order_ref}
    payments = {p.sabpaisa_txn_id: p for p in _payments_of(acquirer.name).filter(sabpaisa_txn_id__in=order_refs)}
    refunds = {(r.payment_id, acquirer.refund_ref(r.refund_id)): r
               for r in Refund.objects.filter(payment__in=payments.values())}
    disputes = _disputes_of([payments[e.order_ref] for e in events
                             if e.kind == "chargeback" and e.order_ref in payments], acquirer.name)
    rows, seen = [], set()
    for event in events:
        if event.event_id in seen:
            continue  # the acquirer repeated an event within the page: one line
        seen.add(event.event_id)
        payment = payments.get(event.order_ref)
        refund = refunds.get((payment.pk, event.refund_ref)) if payment and event.kind == "refund" else None
        dispute = _dispute_charged(disputes.get(payment.pk, []), event.amount) \
            if payment and event.kind == "chargeback" else None
        rows.append(SettlementLine(
            settlement=settlement, kind=event.kind, processor_event_id=event.event_id, amount=event.amount,
            fee=event.fee, tax=event.tax, payment=payment, refund=refund, processor_order_id=event.order_ref[:64],
            processor_payment_id=event.payment_ref[:64], processor_refund_id=event.refund_ref[:64],
            event_type=event.event_type[:32], dispute=dispute))
    with transaction.atomic():
        # Serialises two fetches storing the same settlement's lines (the beat and the
        # webhook): the second sees the first's lines instead of both counting them new.
        locked = Settlement.objects.select_for_update().get(pk=settlement.pk)
        known = set(locked.lines.values_list("processor_event_id", flat=True))
        new = [row for row in rows if row.processor_event_id not in known]
        SettlementLine.objects.bulk_create(new, ignore_conflicts=True)
        _totals_refresh(locked)
    return len(new)


def _payments_of(acquirer_name: str):
    """The payments `acquirer_name` took: a settlement pays out only its own acquirer's payments,
    so a line naming another acquirer's payment is left unlinked (the reconciliation's
    unknown_reference) rather than settling a payment it never took. A payment with no acquirer
    recorded (never routed: the simulator's flows, rows from before the acquirer was recorded,
    which migration 0022 named) is not judged: any acquirer's line may name it."""
    return Payment.objects.filter(Q(acquirer=acquirer_name) | Q(acquirer=""))


def _disputes_of(payments: list[Payment], acquirer_name: str) -> dict[int, list[Dispute]]:
    """The disputes of `payments` at the acquirer that took them, by payment, newest first."""
    found: dict[int, list[Dispute]] = {}
    for dispute in Dispute.objects.filter(payment__in=payments, acquirer=acquirer_name).order_by("-pk"):
        found.setdefault(dispute.payment_id, []).append(dispute)
    return found


def _dispute_charged(disputes: list[Dispute], amount: int) -> Dispute | None:
    """The dispute a chargeback of `amount` took money back for: of the payment's disputes, those
    that took money (lost or accepted) before any other, the one of that amount before any other,
    the newest before the older. None when the payment has no dispute here: the line stays
    unlinked, as a line naming nothing of ours does."""
    taken = (Dispute.Status.LOST, Dispute.Status.ACCEPTED)
    ranked = sorted(disputes, key=lambda d: (d.status not in taken, d.amount != amount))
    return ranked[0] if ranked else None


def _totals_refresh(settlement: Settlement) -> None:
    """The settlement's refunds, chargebacks and adjustments are its lines' (a report states
    gross, fees, tax and net); its merchant is the one merchant its linked payments belong to,
    if they name exactly one."""
    totals = totals_of(settlement.lines.values_list("kind", "amount", "fee", "tax"))
    settlement.refunds, settlement.chargebacks = totals.refunds, totals.chargebacks
    settlement.adjustments = totals.adjustments
    merchants = set(settlement.lines.filter(payment__isnull=False)
                    .values_list("payment__merchant_id", flat=True).distinct())
    if settlement.merchant_id is None and len(merchants) == 1:
        settlement.merchant_id = merchants.pop()
    settlement.save(update_fields=["refunds", "chargebacks", "adjustments", "merchant"])


def settlement_notice_apply(*, acquirer: Acquirer, notice: SettlementNotice) -> tuple[Settlement, int]:
    """A settlement the acquirer says, by its signed delivery, it paid out (the inbound door):
    stored as the settlements call would store it, and its events read from the acquirer.
    Idempotent on the acquirer's ids, like the fetch. Returns the settlement and how many
    lines were new; raises what the acquirer raises (the door asks for the delivery again)."""
    settlement, _ = _settlement_store(acquirer.name, notice.settlement)
    return settlement, _lines_fetch(acquirer, settlement)
