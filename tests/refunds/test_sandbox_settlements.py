"""Staging settles too: the sandbox pays out its payments T+1 with its rate card and 18 % GST,
the fetch reads its payouts through the protocol like any acquirer's, and its fault switch
injects each kind of fault once per payout, which the reconciliation then finds, and nothing
else."""
from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from payments.acquirer.sandbox import settlements as sandbox
from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from payments.models import SandboxSettlement
from refunds.models import MerchantFeeRate, ReconException, Settlement
from refunds.settlements import fetching
from refunds.settlements.arithmetic import settlement_sums, totals_of
from refunds.settlements.reconcile import reconcile
from refunds.settlements.statements import bank_statement_store
from tests.support.factories import make_merchant, make_payment, make_refund

pytestmark = pytest.mark.django_db(transaction=True)


def _today():
    return timezone.now().astimezone(sandbox.IST).date()


def _activity(merchant, count=7):
    payments = [make_payment(merchant, amount=10_000 + 1_237 * n) for n in range(count)]
    refund = make_refund(payments[-1], amount=2_500, status="SUCCESS", processed_at=timezone.now(),
                         bank_refund_reference="RF000000000001")
    SandboxAcquirer().refund(payment=payments[-1], amount=2_500, refund_id=refund.refund_id)
    return payments, refund


def _fetch_and_reconcile(payouts):
    fetching.settlements_fetch(SandboxAcquirer())
    bank_statement_store(name="sandbox.csv", content=sandbox.payout_statement(payouts), source="console")
    return reconcile(as_of=timezone.now() + timedelta(days=5))


def test_the_rate_card_and_gst_round_half_up():
    assert sandbox.sandbox_fee(12_345, "CARD") == (235, 42)
    assert sandbox.sandbox_fee(10_000, "UPI") == (0, 0)
    assert sandbox.sandbox_fee(10_000, "NEFT") == (500, 90)


def test_a_clean_payout_reconciles_to_the_paisa(settings):
    settings.GATEWAY_ACQUIRER = "sandbox"
    merchant = make_merchant()
    payments, refund = _activity(merchant)
    [payout] = sandbox.payouts_make(_today())
    assert sandbox.payouts_make(_today()) == []  # once per merchant and day
    assert payout.settled_at.astimezone(sandbox.IST).date() == _today() + timedelta(days=1)
    assert payout.gross == sum(p.amount for p in payments)
    assert payout.net == payout.gross - payout.fees - payout.tax - refund.amount
    for method, (bp, fixed) in sandbox.RATE_CARD.items():
        MerchantFeeRate.objects.create(merchant=merchant.merchant, method=method, percent_bp=bp, fixed=fixed)
    result = _fetch_and_reconcile([payout])
    assert result.total == 0, result.found
    settlement = Settlement.objects.get()
    totals = totals_of(settlement.lines.values_list("kind", "amount", "fee", "tax"))
    assert settlement_sums(totals, settlement.net) and settlement.bank_line.amount == payout.net
    assert settlement.merchant == merchant.merchant and settlement.lines.get(kind="refund").refund == refund


def test_each_injected_fault_is_found_once_and_nothing_else(settings):
    settings.GATEWAY_ACQUIRER = "sandbox"
    merchant = make_merchant()
    _activity(merchant)
    for method, (bp, fixed) in sandbox.RATE_CARD.items():
        MerchantFeeRate.objects.create(merchant=merchant.merchant, method=method, percent_bp=bp, fixed=fixed)
    [payout] = sandbox.payouts_make(_today(), faults=sandbox.FAULTS)
    assert payout.faults == list(sandbox.FAULTS)
    _fetch_and_reconcile([payout])
    assert Counter(ReconException.objects.values_list("kind", flat=True)) == {kind: 1 for kind in sandbox.FAULTS}


def test_the_switch_is_refused_in_production_and_writes_a_statement(settings, tmp_path):
    settings.GATEWAY_ACQUIRER = "sandbox"
    merchant = make_merchant()
    _activity(merchant, count=2)
    settings.IS_PRODUCTION = True
    with pytest.raises(CommandError):
        call_command("sandbox_settle", "--day", _today().isoformat(), "--fault", "tax_not_gst")
    settings.IS_PRODUCTION = False
    out = tmp_path / "statement.csv"
    call_command("sandbox_settle", "--day", _today().isoformat(), "--fault", "tax_not_gst", "--fee-table",
                 "--statement", str(out))
    payout = SandboxSettlement.objects.get()
    assert payout.faults == ["tax_not_gst"]
    assert out.read_text().splitlines()[1].split(",")[2] == payout.utr
    assert MerchantFeeRate.objects.filter(merchant=merchant.merchant).count() == len(sandbox.RATE_CARD)


def test_the_beat_pays_out_only_for_the_sandbox(settings):
    merchant = make_merchant()
    make_payment(merchant, amount=5_000)
    # The deployment's acquirers are the configured one and GATEWAY_ACQUIRERS (routing, D21).
    settings.GATEWAY_ACQUIRER, settings.GATEWAY_ACQUIRERS = "cashfree", ["cashfree"]
    tomorrow = timezone.now() + timedelta(days=1)
    assert sandbox.payouts_due(now=tomorrow) == 0
    settings.GATEWAY_ACQUIRER, settings.GATEWAY_ACQUIRERS = "sandbox", ["sandbox"]
    assert sandbox.payouts_due(now=tomorrow) == 1
    assert sandbox.payouts_due(now=tomorrow) == 0
