"""The settlement export: one merchant, one calendar day, as CSV (docs/console.md).

The day is the Asia/Kolkata calendar day (settings.TIME_ZONE), 00:00 to 24:00 IST. A
successful payment belongs to the day of its `completed_at` (when it became SUCCESS), a refund
to the day of its `processed_at` (when the bank confirmed it), whichever day the payment was
made. Pending and failed refunds move no money and are not listed.

Rows, in time order: every payment, then every refund, then three totals:

    record_type      payment | refund | total_payments | total_refunds | net
    amount_paise     payment: the amount paid; refund: minus the amount refunded;
                     totals: the sums of those rows; net: total_payments + total_refunds
    amount_rupees    the same in rupees with two decimals, for people
    count            totals only: how many rows they sum

So the amount column of the detail rows always adds up to `net`. Text that a merchant or a
customer chose (merchantTxnId) is written so a spreadsheet never runs it as a formula.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from typing import Iterable, Iterator

from django.db.models import Count, Sum
from django.db.models.functions import Coalesce

from gateway.console.kit.days import day_bounds, local
from gateway.platform.models import Merchant
from gateway.core.money import rupees_str
from payments import selectors as payment_selectors
from refunds import selectors as refund_selectors

COLUMNS = ["record_type", "merchant_id", "date", "sabpaisa_txn_id", "payment_id", "merchant_txn_id", "refund_id",
           "payment_mode", "bank_reference", "timestamp_ist", "count", "amount_paise", "amount_rupees"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class SettlementTotals:
    payments: int = 0
    payments_paise: int = 0
    refunds: int = 0
    refunds_paise: int = 0

    @property
    def net_paise(self) -> int:
        return self.payments_paise - self.refunds_paise

    def as_dict(self) -> dict:
        return {"payments": self.payments, "payments_paise": self.payments_paise, "refunds": self.refunds,
                "refunds_paise": self.refunds_paise, "net_paise": self.net_paise}


def _text(value: str) -> str:
    """Cells a spreadsheet would evaluate (=, +, -, @) are prefixed with an apostrophe."""
    return "'" + value if value.startswith(_FORMULA_START) else value


def settlement_payments(merchant: Merchant, day: date):
    start, end = day_bounds(day)
    return payment_selectors.payments_settled(merchant=merchant, start=start, end=end)


def settlement_refunds(merchant: Merchant, day: date):
    start, end = day_bounds(day)
    return refund_selectors.refunds_settled(merchant=merchant, start=start, end=end)


def settlement_totals(merchant: Merchant, day: date) -> SettlementTotals:
    """The totals alone, by aggregate queries: the export page's preview and the audit record."""
    paid = settlement_payments(merchant, day).aggregate(
        n=Count("id"), paise=Coalesce(Sum(Coalesce("paid_amount", "amount")), 0))
    refunded = settlement_refunds(merchant, day).aggregate(n=Count("id"), paise=Coalesce(Sum("amount"), 0))
    return SettlementTotals(paid["n"], paid["paise"], refunded["n"], refunded["paise"])


def settlement_rows(merchant: Merchant, day: date, totals: SettlementTotals | None = None) -> Iterator[list[str]]:
    """The CSV's rows, header first, read in chunks so a busy day never sits in memory.
    `totals`, when given, is filled in as the rows go by (the totals rows are written from it)."""
    totals = totals if totals is not None else SettlementTotals()
    code, day_text = merchant.code, day.isoformat()
    yield COLUMNS
    for payment in settlement_payments(merchant, day).iterator(chunk_size=2000):
        paise = payment.paid_amount or payment.amount
        totals.payments += 1
        totals.payments_paise += paise
        yield ["payment", code, day_text, payment.sabpaisa_txn_id, payment.payment_id,
               _text(payment.merchant_txn_id), "", payment.payment_mode, _text(payment.bank_rrn),
               local(payment.completed_at).isoformat(timespec="seconds"), "", str(paise), rupees_str(paise)]
    for refund in settlement_refunds(merchant, day).iterator(chunk_size=2000):
        totals.refunds += 1
        totals.refunds_paise += refund.amount
        yield ["refund", code, day_text, refund.payment.sabpaisa_txn_id, refund.payment.payment_id,
               _text(refund.payment.merchant_txn_id), _text(refund.refund_id), refund.payment_mode,
               _text(refund.bank_refund_reference), local(refund.processed_at).isoformat(timespec="seconds"), "",
               str(-refund.amount), rupees_str(-refund.amount)]
    blank = [""] * 7
    yield ["total_payments", code, day_text, *blank, str(totals.payments), str(totals.payments_paise),
           rupees_str(totals.payments_paise)]
    yield ["total_refunds", code, day_text, *blank, str(totals.refunds), str(-totals.refunds_paise),
           rupees_str(-totals.refunds_paise)]
    yield ["net", code, day_text, *blank, str(totals.payments + totals.refunds), str(totals.net_paise),
           rupees_str(totals.net_paise)]


def settlement_filename(merchant: Merchant, day: date) -> str:
    return f"settlement-{merchant.code}-{day.isoformat()}.csv"


class _Line:
    """A file-like object whose write() hands back what it was given, for streaming csv."""

    def write(self, value: str) -> str:
        return value


def settlement_csv_lines(rows: Iterable[list[str]]) -> Iterator[str]:
    writer = csv.writer(_Line(), lineterminator="\r\n")
    for row in rows:
        yield writer.writerow(row)


def settlement_write(file, merchant: Merchant, day: date) -> SettlementTotals:
    """Write the CSV to an open text file; returns the totals written."""
    totals = SettlementTotals()
    for line in settlement_csv_lines(settlement_rows(merchant, day, totals)):
        file.write(line)
    return totals
