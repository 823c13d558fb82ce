"""Fetching settlements through the protocol, whichever the acquirer: resumable from the cursor
kept per acquirer, idempotent on the acquirer's ids. Driven by the sandbox, whose report is read
from its own records (payments.acquirer.sandbox.settlements)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from payments.acquirer.base import SettlementEventFound, SettlementFound, SettlementPage
from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from payments.models import SandboxSettlement, SandboxSettlementEvent
from refunds.models import Settlement, SettlementFetch, SettlementLine
from refunds.settlements import fetching
from tests.support.factories import make_merchant, make_payment, make_refund

pytestmark = pytest.mark.django_db(transaction=True)
DAY = datetime(2026, 11, 2, tzinfo=timezone.utc)


def _payouts(merchant, count: int, *, events: int = 2):
    payment = make_payment(merchant, amount=10_000)
    for n in range(count):
        start = DAY + timedelta(days=n)
        payout = SandboxSettlement.objects.create(
            settlement_id=f"sbx_{n}", merchant=merchant.merchant, utr=f"SBXUTR{n:06d}", period_start=start,
            period_end=start + timedelta(days=1), gross=events * 10_000, fees=events * 200, tax=events * 36,
            net=events * (10_000 - 236), settled_at=start + timedelta(days=1))
        SandboxSettlementEvent.objects.bulk_create([SandboxSettlementEvent(
            settlement=payout, merchant=merchant.merchant, event_id=f"ev_{n}_{e}", kind="payment", amount=10_000,
            fee=200, tax=36, order_ref=payment.sabpaisa_txn_id if e == 0 else f"not_ours_{n}")
            for e in range(events)])
    return payment


def test_the_sandbox_reports_its_payouts_as_neutral_pages():
    merchant = make_merchant()
    _payouts(merchant, 101, events=1)
    sandbox = SandboxAcquirer()
    first = sandbox.settlements_list(start=None, end=None)
    assert isinstance(first, SettlementPage) and len(first.items) == 100 and first.cursor
    assert all(isinstance(item, SettlementFound) for item in first.items)
    last = sandbox.settlements_list(start=None, end=None, cursor=first.cursor)
    assert [item.settlement_id for item in last.items] == ["sbx_100"] and last.cursor == ""
    [event] = sandbox.settlement_events(settlement_id="sbx_0").items
    assert isinstance(event, SettlementEventFound) and (event.kind, event.amount, event.fee, event.tax) == (
        "payment", 10_000, 200, 36)


def test_a_fetch_cut_short_resumes_from_its_cursor_and_adds_nothing_twice():
    merchant = make_merchant()
    payment = _payouts(merchant, 250)
    sandbox = SandboxAcquirer()
    start, end = DAY, DAY + timedelta(days=400)
    cut = fetching.settlements_fetch(sandbox, start=start, end=end, max_pages=1)
    assert (cut.settlements_added, cut.lines_added) == (100, 200)
    state = SettlementFetch.objects.get(acquirer="sandbox")
    assert state.cursor and state.finished_until is None
    # The next run finishes the walk it left (from page 2, not page 1), then reads its own period.
    rest = fetching.settlements_fetch(sandbox, start=start, end=end)
    assert rest.settlements_added == 150
    assert Settlement.objects.count() == 250 and SettlementLine.objects.count() == 500
    state.refresh_from_db()
    assert state.cursor == "" and state.finished_until == end
    again = fetching.settlements_fetch(sandbox, start=start, end=end)
    assert (again.settlements_added, again.lines_added) == (0, 0)
    line = SettlementLine.objects.get(processor_event_id="ev_0_0")
    assert line.payment == payment and line.settlement.merchant == merchant.merchant


def test_a_refund_the_sandbox_made_waits_for_the_next_payout():
    merchant = make_merchant()
    payment = make_payment(merchant, amount=10_000)
    refund = make_refund(payment, amount=4_000)
    answer = SandboxAcquirer().refund(payment=payment, amount=4_000, refund_id=refund.refund_id)
    SandboxAcquirer().refund(payment=payment, amount=4_000, refund_id=refund.refund_id)
    assert answer.outcome == "approved"
    [pending] = SandboxSettlementEvent.objects.filter(kind="refund")
    assert (pending.settlement, pending.amount, pending.refund_ref) == (None, 4_000, refund.refund_id)
