"""Settlements, their lines and reconciliation exceptions as the console's tests need them:
written as rows (the fetch and the reconciliation have tests of their own)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone as dt_timezone

from payments.models import Payment
from refunds.models import ReconException, Refund, Settlement, SettlementLine
from tests.support.factories import make_payment, make_refund

UTC = dt_timezone.utc
PAID_AT = datetime(2026, 11, 21, 6, 30, tzinfo=UTC)  # noon IST


def settlement_of(merchant, processor_id: str, *, payments=(), refunds=(), fee: int = 200, tax: int = 36,
                  adjustment: int = 0, net_off_by: int = 0, utr: str | None = None, paid_at=PAID_AT) -> Settlement:
    """A settlement whose figures are its lines' sums (its net off by `net_off_by`)."""
    gross = sum(p.amount for p in payments)
    refunded = sum(r.amount for r in refunds)
    fees, taxes = fee * len(payments), tax * len(payments)
    settlement = Settlement.objects.create(
        acquirer="cashfree", merchant=getattr(merchant, "merchant", merchant), processor_settlement_id=processor_id,
        utr=f"UTR{processor_id}" if utr is None else utr, period_start=paid_at - timedelta(days=1),
        period_end=paid_at, gross=gross, fees=fees, tax=taxes, refunds=refunded, adjustments=adjustment,
        net=gross - fees - taxes - refunded + adjustment + net_off_by, status="SUCCESS", settled_at=paid_at)
    SettlementLine.objects.bulk_create(
        [SettlementLine(settlement=settlement, kind="payment", processor_event_id=f"{processor_id}-p{n:04d}",
                        amount=p.amount, fee=fee, tax=tax, payment=p, processor_order_id=p.sabpaisa_txn_id)
         for n, p in enumerate(payments)]
        + [SettlementLine(settlement=settlement, kind="refund", processor_event_id=f"{processor_id}-r{n:04d}",
                          amount=r.amount, payment=r.payment, refund=r, processor_order_id=r.payment.sabpaisa_txn_id)
           for n, r in enumerate(refunds)])
    if adjustment:
        SettlementLine.objects.create(settlement=settlement, kind="adjustment", processor_event_id=f"{processor_id}-adj",
                                      amount=adjustment, event_type="FUND_SWEEP")
    return settlement


@dataclass
class Books:
    clean: Settlement
    short: Settlement
    paid: list[Payment]
    refund: Refund
    fee_exception: ReconException
    unknown_line: SettlementLine
    unknown_exception: ReconException


def books(merchant) -> Books:
    """A clean settlement and a short one: the short one's net is 500 paise under its figures,
    one fee is over the agreed rate (an exception) and one line names an order we don't know."""
    paid = [make_payment(merchant, amount=10_000 * (n + 1)) for n in range(3)]
    refund = make_refund(paid[0], amount=2_000, status="SUCCESS", bank_refund_reference="ARN-BOOKS")
    clean = settlement_of(merchant, "CLEAN1", payments=paid[:1], paid_at=PAID_AT - timedelta(days=1))
    short = settlement_of(merchant, "SHORT1", payments=paid[1:], refunds=[refund], adjustment=-300, net_off_by=-500)
    over = short.lines.get(processor_event_id="SHORT1-p0000")
    fee_exception = ReconException.objects.create(
        kind="fee_mismatch", subject=f"line:{over.pk}", merchant=short.merchant, settlement=short, line=over,
        payment=over.payment, expected=150, actual=200, evidence={"rate": "1.50 %", "amount": over.amount})
    unknown_line = SettlementLine.objects.create(settlement=short, kind="payment", processor_event_id="SHORT1-x",
                                                 amount=700, processor_order_id="=HYPERLINK(evil)")
    unknown_exception = ReconException.objects.create(
        kind="unknown_reference", subject=f"line:{unknown_line.pk}", merchant=short.merchant, settlement=short,
        line=unknown_line, evidence={"order_id": "=HYPERLINK(evil)"})
    return Books(clean, short, paid, refund, fee_exception, unknown_line, unknown_exception)
