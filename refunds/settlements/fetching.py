"""Fetching Cashfree's settlements and their events into Settlement / SettlementLine rows.

Idempotent on Cashfree's ids: a settlement is keyed by (acquirer, cf_settlement_id) and a line
by (settlement, event_id), so running the fetch again, or over an overlapping period, adds
nothing twice (the unique constraints are the guarantee; a re-run skips what is there). No
call to Cashfree is made inside a transaction: each page is fetched first, then stored in one
short transaction. A cursor Cashfree sends back a second time ends the walk (a server that
repeats itself must not keep a worker forever).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils.dateparse import parse_datetime

from payments.acquirer.cashfree import client as cf
from payments.acquirer.cashfree.acquirer import cashfree_refund_id
from payments.models import Payment
from refunds.models import Refund, Settlement, SettlementLine
from refunds.settlements.arithmetic import totals_of

logger = logging.getLogger(__name__)

ACQUIRER = "cashfree"
PAGE_LIMIT = 100
MAX_PAGES = 10_000  # 1,000,000 settlements at 100 a page: far past any real account's day

_KINDS = {"PAYMENT": SettlementLine.Kind.PAYMENT, "REFUND": SettlementLine.Kind.REFUND,
          "DISPUTE": SettlementLine.Kind.CHARGEBACK, "CHARGEBACK": SettlementLine.Kind.CHARGEBACK}


@dataclass
class FetchResult:
    settlements_added: int = 0
    lines_added: int = 0


def _pages(fetch):
    """Every page of a cursor walk; `fetch(cursor)` gets one."""
    seen: set[str] = set()
    cursor = ""
    for _ in range(MAX_PAGES):
        page = fetch(cursor)
        yield page
        if not page.cursor or page.cursor in seen or not page.items:
            return
        seen.add(page.cursor)
        cursor = page.cursor


def line_kind(event: cf.ReconEvent) -> str:
    """Cashfree's event type as our line kind: payments, refunds and disputes (chargebacks)
    by name, anything else (fund sweeps, reversals, fees billed apart) an adjustment."""
    return _KINDS.get(event.event_type, SettlementLine.Kind.ADJUSTMENT)


def line_amount(event: cf.ReconEvent, kind: str) -> int:
    """An adjustment is signed by its sale type (DEBIT takes money away); the other kinds are
    amounts whose sign their kind gives."""
    if kind == SettlementLine.Kind.ADJUSTMENT and event.sale_type == "DEBIT":
        return -event.amount
    return event.amount


def cashfree_settlements_fetch(client: cf.CashfreeClient, *, start: datetime | None = None,
                               end: datetime | None = None) -> FetchResult:
    """Store every settlement Cashfree reports between `start` and `end`, with its events."""
    result = FetchResult()
    for page in _pages(lambda cursor: client.fetch_settlements(cursor=cursor, limit=PAGE_LIMIT,
                                                               start=start, end=end)):
        for found in page.items:
            settlement, created = _settlement_store(found)
            result.settlements_added += created
            result.lines_added += _lines_fetch(client, settlement)
    logger.info("cashfree settlements fetched", extra={"settlements_added": result.settlements_added,
                                                       "lines_added": result.lines_added})
    return result


def _settlement_store(found: cf.Settlement) -> tuple[Settlement, bool]:
    settled_at = parse_datetime(found.transfer_time) if found.transfer_time else None
    with transaction.atomic():
        return Settlement.objects.get_or_create(
            acquirer=ACQUIRER, processor_settlement_id=found.cf_settlement_id,
            defaults={"utr": found.utr, "gross": found.gross or 0, "fees": found.service_charge,
                      "tax": found.service_tax, "net": found.net or 0, "settled_at": settled_at,
                      "status": "SETTLED" if found.utr else ""})


def _lines_fetch(client: cf.CashfreeClient, settlement: Settlement) -> int:
    added = 0
    ids = [settlement.processor_settlement_id]
    for page in _pages(lambda cursor: client.fetch_settlement_recon(settlement_ids=ids, cursor=cursor,
                                                                    limit=PAGE_LIMIT)):
        added += _lines_store(settlement, page.items)
    return added


def _lines_store(settlement: Settlement, events: list[cf.ReconEvent]) -> int:
    """One page of events in one transaction, linked to our payments by Cashfree's order id
    (our sabpaisa_txn_id) and to our refunds by the refund id Cashfree knows them by."""
    order_ids = {event.order_id for event in events if event.order_id}
    payments = {p.sabpaisa_txn_id: p for p in Payment.objects.filter(sabpaisa_txn_id__in=order_ids)}
    refunds = {(r.payment_id, cashfree_refund_id(r.refund_id)): r
               for r in Refund.objects.filter(payment__in=payments.values())}
    rows, seen = [], set()
    for event in events:
        if event.event_id in seen:
            continue  # Cashfree repeated an event within the page: one line
        seen.add(event.event_id)
        kind = line_kind(event)
        payment = payments.get(event.order_id)
        refund = refunds.get((payment.pk, event.refund_id)) if payment and kind == "refund" else None
        rows.append(SettlementLine(
            settlement=settlement, kind=kind, processor_event_id=event.event_id,
            amount=line_amount(event, kind), fee=event.service_charge, tax=event.service_tax,
            payment=payment, refund=refund, processor_order_id=event.order_id[:64],
            processor_payment_id=event.cf_payment_id[:64], processor_refund_id=event.refund_id[:64],
            event_type=event.event_type[:32]))
    with transaction.atomic():
        locked = Settlement.objects.select_for_update().get(pk=settlement.pk)
        known = set(locked.lines.values_list("processor_event_id", flat=True))
        new = [row for row in rows if row.processor_event_id not in known]
        SettlementLine.objects.bulk_create(new, ignore_conflicts=True)
        _totals_refresh(locked)
    return len(new)


def _totals_refresh(settlement: Settlement) -> None:
    """The settlement's refunds, chargebacks and adjustments are its lines' (Cashfree's
    settlement states only gross, charge, tax and net); its merchant is the one merchant its
    linked payments belong to, if they name exactly one."""
    lines = list(settlement.lines.values_list("kind", "amount", "fee", "tax"))
    totals = totals_of(lines)
    settlement.refunds, settlement.chargebacks = totals.refunds, totals.chargebacks
    settlement.adjustments = totals.adjustments
    merchants = set(settlement.lines.filter(payment__isnull=False)
                    .values_list("payment__merchant_id", flat=True).distinct())
    if settlement.merchant_id is None and len(merchants) == 1:
        settlement.merchant_id = merchants.pop()
    settlement.save(update_fields=["refunds", "chargebacks", "adjustments", "merchant"])
