"""Finance's settlement pages: the list, one settlement's page, and the merchant's CSV of one
settlement (docs/settlements.md, "Finance's console"). Reads go through
refunds.selectors; nothing here writes but the audit of an export.

"Why is this settlement short?" is answered on the settlement's page by `shortfall`: the
settlement's figures in the one formula (net = gross − fees − tax − refunds − chargebacks
± adjustments), what the bank credited under its UTR, and its exceptions, each in words.

The merchant's CSV, one per settlement, a table an accountant loads as it is:

    record_type   payment | refund | chargeback | adjustment, one row per line; then
                  total_payment, total_refund, total_chargeback, total_adjustment (per kind),
                  lines_net (every line), settlement_net (what was paid out), difference
                  (only when those two differ), fee_invoice (the GST figures: taxable value,
                  GST, invoice total)
    amount_paise  the line's effect before fees: + a payment or a credit adjustment,
                  − a refund, a chargeback or a debit adjustment
    fee_paise, gst_paise    the acquirer's fee on the line and the GST on it (deducted)
    net_paise     amount − fee − GST: the line's part of the payout. The net_paise of the
                  detail rows adds up to lines_net; when the settlement adds up, that is
                  settlement_net.
    *_rupees      the same in rupees with two decimals, for people

Text a merchant or the acquirer chose is written so a spreadsheet never runs it as a formula.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from datetime import date
from typing import Iterator

from django.core.paginator import Paginator
from django.urls import reverse

from gateway.console.kit.days import local
from gateway.console.kit.display import money
from gateway.core.money import rupees_str
from refunds import selectors

LIST_PER_PAGE = 50
LINES_PER_PAGE = 100
EXPORT_CHUNK = 2000
GST_RATE_PERCENT = 18

# How each kind of line moves the payout before fees: a payment adds, a refund or a chargeback
# takes away, an adjustment carries its own sign.
SIGN = {"payment": 1, "refund": -1, "chargeback": -1, "adjustment": 1}

COLUMNS = ["record_type", "settlement_id", "merchant_id", "utr", "settled_on", "event_id", "sabpaisa_txn_id",
           "merchant_txn_id", "refund_id", "count", "amount_paise", "fee_paise", "gst_paise", "net_paise",
           "amount_rupees", "fee_rupees", "gst_rupees", "net_rupees", "note"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str:
    """A cell a spreadsheet would evaluate (=, +, -, @) is prefixed with an apostrophe."""
    return "'" + value if value.startswith(_FORMULA_START) else value


def payment_story_url(payment_pk: int) -> str:
    """A payment's page in the console, where its whole story is told (gateway/console/story.py)."""
    return reverse("admin:payments_payment_change", args=[payment_pk])


# --- the list -------------------------------------------------------------------------------

def settlements_page(*, page_number, merchant_code=None, from_day=None, to_day=None, matched=None, short=False):
    """A page of the list (LIST_PER_PAGE rows) with Django's paginator over a capped count."""
    from gateway.console.kit.lists import PAGES_AHEAD, CappedCountPaginator

    queryset = selectors.settlements_for_console(merchant_code=merchant_code, from_day=from_day, to_day=to_day,
                                                 matched=matched, short=short)
    try:
        number = max(1, int(page_number or 1))
    except ValueError:
        number = 1
    paginator = CappedCountPaginator(queryset, LIST_PER_PAGE, cap=(number + PAGES_AHEAD) * LIST_PER_PAGE + 1)
    return paginator.get_page(number)


# --- one settlement ---------------------------------------------------------------------------

@dataclass
class Term:
    """One term of the formula on the settlement's page."""

    sign: str
    label: str
    paise: int

    @property
    def text(self) -> str:
        return money(self.paise)


@dataclass
class Shortfall:
    """Why a settlement's payout is what it is, and whether anything is wrong with it."""

    terms: list[Term]
    expected_net: int
    net: int
    adds_up: bool
    bank_amount: int | None          # the matched bank credit, None when none matched
    bank_matched: bool
    paid: bool                       # it has a UTR: the acquirer says it paid
    open_exceptions: int
    reasons: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.reasons


def shortfall(settlement, exceptions) -> Shortfall:
    """The settlement's figures as the formula adds them, and each reason it is short or in
    doubt, in words, most telling first."""
    s = settlement
    terms = [Term("", "Gross (payments settled)", s.gross), Term("−", "Fees", s.fees),
             Term("−", "GST on fees", s.tax), Term("−", "Refunds deducted", s.refunds),
             Term("−", "Chargebacks deducted", s.chargebacks),
             Term("+" if s.adjustments >= 0 else "−", "Adjustments", abs(s.adjustments))]
    expected = s.gross - s.fees - s.tax - s.refunds - s.chargebacks + s.adjustments
    bank = s.bank_line.amount if s.bank_line_id and s.bank_line else None
    open_ones = [e for e in exceptions if e.status == "open"]
    reasons = []
    if s.net != expected:
        reasons.append(f"The figures do not add up: gross less fees, GST, refunds and chargebacks, plus "
                       f"adjustments, is {money(expected)}, but the acquirer stated a net of {money(s.net)} "
                       f"({money(s.net - expected)} difference).")
    if s.utr and bank is None:
        reasons.append(f"No bank credit of {money(s.net)} under UTR {s.utr} has been matched: upload the bank "
                       "statement that covers its payment date, or chase the acquirer.")
    elif not s.utr:
        reasons.append("The acquirer has not paid it out yet (no UTR).")
    for exception in open_ones:
        reasons.append(exception_reason(exception))
    if s.chargebacks:
        reasons.append(f"Chargebacks of {money(s.chargebacks)} were deducted.")
    if s.refunds:
        reasons.append(f"Refunds of {money(s.refunds)} were deducted.")
    if s.adjustments < 0:
        reasons.append(f"The acquirer debited adjustments of {money(-s.adjustments)}.")
    return Shortfall(terms, expected, s.net, s.net == expected, bank, bank is not None, bool(s.utr),
                     len(open_ones), reasons)


def exception_reason(exception) -> str:
    """An exception's kind in words (the model's label), with its figures when it has them."""
    from gateway.console.reconciliation import kind_reason

    text = kind_reason(exception.kind)
    if exception.expected is not None and exception.actual is not None:
        text += f": expected {money(exception.expected)}, found {money(exception.actual)}"
    return text + "."


def lines_page(settlement, page_number):
    paginator = Paginator(selectors.settlement_lines_for_console(settlement), LINES_PER_PAGE)
    # The page's own count is the settlement's line count, already read: no second COUNT.
    paginator.count = settlement.line_count
    try:
        number = max(1, int(page_number or 1))
    except ValueError:
        number = 1
    return paginator.get_page(number)


# --- the merchant's CSV -----------------------------------------------------------------------

@dataclass
class _Sum:
    count: int = 0
    amount: int = 0
    fee: int = 0
    gst: int = 0

    @property
    def net(self) -> int:
        return self.amount - self.fee - self.gst

    def add(self, amount: int, fee: int, gst: int) -> None:
        self.count += 1
        self.amount += amount
        self.fee += fee
        self.gst += gst


def _money_cells(amount: int | str, fee: int | str, gst: int | str, net: int | str) -> list[str]:
    values = [amount, fee, gst, net]
    return [*(str(v) for v in values), *(rupees_str(v) if v != "" else "" for v in values)]


def settlement_public_id(settlement) -> str:
    return selectors.settlement_public_id(settlement)


def settlement_export_filename(settlement) -> str:
    code = settlement.merchant.code if settlement.merchant_id else "unassigned"
    paid = local(settlement.settled_at).date().isoformat() if settlement.settled_at else "unpaid"
    return f"settlement-{code}-{settlement_public_id(settlement)}-{paid}.csv"


def settlement_export_rows(settlement) -> Iterator[list[str]]:
    """The merchant's CSV of one settlement, header first, its lines read EXPORT_CHUNK at a time
    by event id (refunds.selectors.settlement_lines_after): no server-side cursor."""
    public_id = settlement_public_id(settlement)
    code = settlement.merchant.code if settlement.merchant_id else ""
    utr = _text(settlement.utr)
    settled_on = local(settlement.settled_at).date().isoformat() if settlement.settled_at else ""
    head = [public_id, code, utr, settled_on]
    sums = {kind: _Sum() for kind in SIGN}
    yield COLUMNS
    after = None
    while True:
        chunk = selectors.settlement_lines_after(settlement, after=after, limit=EXPORT_CHUNK)
        for line in chunk:
            amount = SIGN.get(line.kind, 1) * line.amount
            sums.setdefault(line.kind, _Sum()).add(amount, line.fee, line.tax)
            payment, refund = line.payment, line.refund
            yield [line.kind, *head, _text(line.processor_event_id),
                   payment.sabpaisa_txn_id if payment else _text(line.processor_order_id),
                   _text(payment.merchant_txn_id) if payment else "",
                   _text(refund.refund_id) if refund else _text(line.processor_refund_id), "",
                   *_money_cells(amount, line.fee, line.tax, amount - line.fee - line.tax),
                   "" if payment or line.kind == "adjustment" else "names no payment of ours"]
        if len(chunk) < EXPORT_CHUNK:
            break
        after = chunk[-1].processor_event_id
    blank = [""] * 4
    total = _Sum()
    for kind, summed in sums.items():
        total.count += summed.count
        total.amount += summed.amount
        total.fee += summed.fee
        total.gst += summed.gst
        yield [f"total_{kind}", *head, *blank, str(summed.count),
               *_money_cells(summed.amount, summed.fee, summed.gst, summed.net), ""]
    yield ["lines_net", *head, *blank, str(total.count), *_money_cells(total.amount, total.fee, total.gst, total.net),
           "every line: amount less fee and GST"]
    yield ["settlement_net", *head, *blank, "", *_money_cells("", "", "", settlement.net),
           "paid into the bank account under the UTR"]
    if settlement.net != total.net:
        yield ["difference", *head, *blank, "", *_money_cells("", "", "", settlement.net - total.net),
               "settlement_net less lines_net: ask us"]
    yield ["fee_invoice", *head, *blank, "", *_money_cells("", total.fee, total.gst, total.fee + total.gst),
           f"fee_paise is the taxable value, gst_paise the GST at {GST_RATE_PERCENT}% (CGST 9% + SGST 9%, or IGST "
           f"{GST_RATE_PERCENT}%, as the acquirer's tax invoice states), net_paise the invoice total"]


class _Line:
    """A file-like object whose write() hands back what it was given, for streaming csv."""

    def write(self, value: str) -> str:
        return value


def csv_lines(rows) -> Iterator[str]:
    writer = csv.writer(_Line(), lineterminator="\r\n")
    for row in rows:
        yield writer.writerow(row)


def day_or_none(value: str | None) -> date | None:
    """A YYYY-MM-DD filter of the list; anything else is no filter (the form says so)."""
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def settlement_row(s) -> dict:
    """One settlement as the list shows it; `s` carries the selector's annotations."""
    return {
        "pk": s.pk, "public_id": settlement_public_id(s), "merchant": s.merchant.code if s.merchant_id else "—",
        "period": (f"{local(s.period_start):%d %b} – {local(s.period_end):%d %b %Y}"
                   if s.period_start and s.period_end else "—"),
        "settled": f"{local(s.settled_at):%d %b %Y}" if s.settled_at else "not paid out",
        "utr": s.utr or "—", "gross": money(s.gross), "fees": money(s.fees), "tax": money(s.tax),
        "deductions": money(s.refunds + s.chargebacks), "adjustments": money(s.adjustments), "net": money(s.net),
        "matched": s.bank_line_id is not None, "adds_up": s.net == s.expected_net,
        "open_exceptions": s.open_exceptions,
    }


def line_row(line) -> dict:
    """One line as the settlement's page shows it, its payment's story a click away."""
    payment, refund = line.payment, line.refund
    return {
        "kind": line.kind, "event_id": line.processor_event_id, "event_type": line.event_type,
        "amount": money(SIGN.get(line.kind, 1) * line.amount), "fee": money(line.fee), "tax": money(line.tax),
        "payment": payment.sabpaisa_txn_id if payment else None,
        "payment_url": payment_story_url(payment.pk) if payment else None,
        "refund": refund.refund_id if refund else None,
        "refund_url": reverse("admin:refunds_refund_change", args=[refund.pk]) if refund else None,
        "unknown": (line.processor_order_id or line.processor_payment_id or line.processor_refund_id)
        if not payment and line.kind != "adjustment" else "",
    }


def settlement_row_of(settlement) -> dict:
    """settlement_row for one settlement read by settlement_for_console (no exception count)."""
    settlement.open_exceptions = None
    return settlement_row(settlement)
