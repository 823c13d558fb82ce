"""Cashfree's settlements as the protocol's neutral values (payments.acquirer.base:
SettlementFound, SettlementEventFound, SettlementPage): the one place Cashfree's settlement
answers are read into our words (docs/settlements.md, "Fetching from Cashfree").

- `POST /settlements`: `cf_settlement_id`, `transfer_utr` the UTR, `order_amount` the gross,
  `service_charge` the fees, `service_tax` the tax, `settlement_amount` the net.
- `POST /settlement/recon`: each event's `event_type` maps to a kind: PAYMENT, REFUND, and
  DISPUTE or CHARGEBACK (a chargeback) by name, anything else (fund sweeps and their reversals,
  fees billed apart) an adjustment, which a `DEBIT` sale type makes negative.
"""
from __future__ import annotations

from django.utils.dateparse import parse_datetime

from payments.acquirer.base import SettlementEventFound, SettlementFound, SettlementPage

from . import client as cf

PAGE_LIMIT = 100

_KINDS = {"PAYMENT": "payment", "REFUND": "refund", "DISPUTE": "chargeback", "CHARGEBACK": "chargeback"}


def event_kind(event_type: str) -> str:
    return _KINDS.get(event_type, "adjustment")


def settlement_found(found: cf.Settlement) -> SettlementFound:
    settled_at = parse_datetime(found.transfer_time) if found.transfer_time else None
    return SettlementFound(settlement_id=found.cf_settlement_id, utr=found.utr, gross=found.gross,
                           fees=found.service_charge, tax=found.service_tax, net=found.net,
                           settled_at=settled_at, status="SETTLED" if found.utr else "")


def event_found(event: cf.ReconEvent) -> SettlementEventFound:
    kind = event_kind(event.event_type)
    amount = -event.amount if kind == "adjustment" and event.sale_type == "DEBIT" else event.amount
    return SettlementEventFound(event_id=event.event_id, kind=kind, amount=amount, fee=event.service_charge,
                                tax=event.service_tax, order_ref=event.order_id, payment_ref=event.cf_payment_id,
                                refund_ref=event.refund_id, event_type=event.event_type)


def settlements_page(client: cf.CashfreeClient, *, start, end, cursor: str) -> SettlementPage:
    page = client.fetch_settlements(cursor=cursor, limit=PAGE_LIMIT, start=start, end=end)
    return SettlementPage(items=tuple(settlement_found(item) for item in page.items), cursor=page.cursor)


def events_page(client: cf.CashfreeClient, *, settlement_id: str, cursor: str) -> SettlementPage:
    page = client.fetch_settlement_recon(settlement_ids=[settlement_id], cursor=cursor, limit=PAGE_LIMIT)
    return SettlementPage(items=tuple(event_found(item) for item in page.items), cursor=page.cursor)
