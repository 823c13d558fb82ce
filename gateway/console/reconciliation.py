"""Finance's reconciliation pages: the exceptions queue, one exception's page, resolving it with
a note, and the bank statement upload (docs/settlements.md, "Finance's console").

The reconciliation itself is refunds.settlements' (the exception model, its one resolve
service, the statement parser and the matcher); this module only says in words what each kind
of exception means and what finance checks, and what each exception names, one click away.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from gateway.console.kit.days import day_start
from gateway.console.kit.display import money
from refunds import selectors
from refunds.settlements.reconcile import reconcile

# What an upload reconciles: the last month, as the hourly reconciliation does, and back to a
# few days before the statement's first day (a settlement is paid into the bank a day or two
# after it is made).
RECONCILE_BACK = timedelta(days=31)
STATEMENT_REACH_BACK = timedelta(days=7)

# What finance checks first, per kind (the kind's label, ReconException.Kind, is the reason itself).
WHAT_TO_CHECK = {
    "not_settled": "Look for the payment in the acquirer's later settlements; if none has it a week on, raise it "
                   "with the acquirer.",
    "settled_twice": "The acquirer paid the same payment twice: expect a debit adjustment, or tell the acquirer.",
    "amount_mismatch": "Compare the payment's amount with the line: a partial capture, or the acquirer's error.",
    "fee_mismatch": "Compare the fee with the merchant's agreed rate (fee table) and claim the difference.",
    "tax_not_gst": "GST is 18% of the fee, rounded half up to the paisa, per line: claim the difference.",
    "refund_mismatch": "A refund taken from the payout never or twice: check the refund's page and the acquirer's "
                       "refund report.",
    "unknown_reference": "The acquirer names a payment or refund we have no record of: ask the acquirer what it is.",
    "bank_unmatched": "The payout is not on the bank statement with its UTR and net amount: upload a later "
                      "statement, or ask the bank and the acquirer.",
    "unbalanced": "The settlement's own figures do not add up to its net: ask the acquirer for a corrected report.",
}


def kind_reason(kind: str) -> str:
    """The reason an exception of `kind` is in the queue, in words (ReconException.Kind's label)."""
    return selectors.recon_exception_kinds().get(kind, kind.replace("_", " "))


@dataclass(frozen=True)
class Named:
    """Something an exception names, with the console page that shows it."""

    what: str
    text: str
    url: str | None


def named_things(exception) -> list[Named]:
    """The payment (its story), refund, settlement and bank credit an exception names."""
    found = []
    if exception.payment_id:
        found.append(Named("payment", exception.payment.sabpaisa_txn_id,
                           reverse("admin:payments_payment_change", args=[exception.payment_id])))
    if exception.refund_id:
        found.append(Named("refund", exception.refund.refund_id,
                           reverse("admin:refunds_refund_change", args=[exception.refund_id])))
    settlement = exception.settlement if exception.settlement_id else (
        exception.line.settlement if exception.line_id else None)
    if settlement is not None:
        found.append(Named("settlement", selectors.settlement_public_id(settlement),
                           reverse("console:settlement", args=[settlement.pk])))
    if exception.line_id:
        found.append(Named("settlement line", exception.line.processor_event_id,
                           reverse("console:settlement", args=[exception.line.settlement_id])))
    if exception.bank_line_id and exception.bank_line:
        line = exception.bank_line
        found.append(Named("bank credit", f"{line.date} {line.utr} {money(line.amount)}", None))
    return found


def evidence_rows(exception) -> list[tuple[str, str]]:
    """The evidence as (name, value) rows, amounts (names ending in `amount`, `paise`, `fee`,
    `tax`, `net`) written as money."""
    rows = []
    if exception.expected is not None:
        rows.append(("expected", money(exception.expected)))
    if exception.actual is not None:
        rows.append(("found", money(exception.actual)))
    for name, value in sorted((exception.evidence or {}).items()):
        money_like = isinstance(value, int) and not isinstance(value, bool) and name.endswith(
            ("amount", "paise", "fee", "tax", "net", "gross"))
        rows.append((name.replace("_", " "), money(value) if money_like else str(value)))
    return rows


def reconcile_after_upload(statement) -> str:
    """Reconcile now that `statement` is in, over the last RECONCILE_BACK and back to a few
    days before the statement's first day (a statement of an older month reaches the
    settlements it pays), and say what came of it, in words, for the page's message. Called
    outside any transaction (the reconciliation runs in one of its own)."""
    now = timezone.now()
    start = now - RECONCILE_BACK
    first_day = selectors.bank_statement_first_day(statement)
    if first_day is not None:
        start = min(start, day_start(first_day) - STATEMENT_REACH_BACK)
    result = reconcile(start=start, end=now)
    found = ", ".join(f"{count} {kind_reason(kind).lower()}" for kind, count in result.found.items() if count)
    counts = selectors.recon_open_counts()
    open_text = "more than 1000" if counts["open_exceptions"] > 1000 else str(counts["open_exceptions"])
    return (f"Reconciled: {result.bank_matched} settlement{'s' if result.bank_matched != 1 else ''} matched to "
            f"a bank credit; {result.total} new exception{'s' if result.total != 1 else ''}"
            f"{' (' + found + ')' if found else ''}; {open_text} open.")
