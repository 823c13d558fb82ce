"""The three-way reconciliation over a generated month (benchmarks/settlement_month.py):
10,000 payments with refunds and a few chargebacks, two merchants, a settlement a day each
and the bank statement. Clean, it reconciles to the paisa with no exception; with each fault
injected a known number of times, every one is found with its kind and nothing else is."""
from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from benchmarks.settlement_month import FAULT_KINDS, month_generate
from refunds.models import ReconException, Settlement
from refunds.settlements.arithmetic import settlement_sums, totals_of
from refunds.settlements.reconcile import reconcile

pytestmark = pytest.mark.django_db(transaction=True)

FAULTS = {"not_settled": 7, "settled_twice": 5, "amount_mismatch": 6, "fee_mismatch": 4, "tax_not_gst": 3,
          "refund_mismatch": 6, "unknown_reference": 5, "bank_unmatched": 4, "unbalanced": 2}


def test_the_faults_cover_every_kind():
    assert set(FAULTS) == set(FAULT_KINDS) == set(ReconException.Kind.values)


def test_a_clean_month_reconciles_to_the_paisa():
    month = month_generate(payments=10_000, chargebacks=5)
    assert month.payments == 10_000 and month.refunds > 500 and month.chargebacks == 5
    result = reconcile(as_of=month.end + timedelta(days=10))
    assert result.total == 0, result.found
    assert ReconException.objects.count() == 0
    settlements = Settlement.objects.prefetch_related("lines")
    assert settlements.count() == 60 and result.bank_matched == 60
    for settlement in settlements:
        totals = totals_of((line.kind, line.amount, line.fee, line.tax) for line in settlement.lines.all())
        assert (totals.gross, totals.fees, totals.tax) == (settlement.gross, settlement.fees, settlement.tax)
        assert settlement_sums(totals, settlement.net)
        assert settlement.bank_line is not None and settlement.bank_line.amount == settlement.net


def test_every_injected_fault_is_found_with_its_kind_and_nothing_else():
    month = month_generate(payments=10_000, chargebacks=5, faults=FAULTS, seed=7)
    as_of = month.end + timedelta(days=10)
    result = reconcile(as_of=as_of)
    found = Counter(ReconException.objects.values_list("kind", flat=True))
    assert dict(found) == FAULTS
    assert result.found == {kind: FAULTS.get(kind, 0) for kind in result.found}
    # Each carries what finance needs to see why.
    short = ReconException.objects.filter(kind="amount_mismatch").first()
    assert short.actual - short.expected == 100 and short.line.payment_id == short.payment_id
    refund = ReconException.objects.filter(kind="refund_mismatch")
    assert sorted(e.evidence["deducted"] for e in refund) == [0, 0, 0, 2, 2, 2]
    # Running it again records nothing twice.
    again = reconcile(as_of=as_of)
    assert again.total == 0 and ReconException.objects.count() == sum(FAULTS.values())


def test_a_payment_not_yet_due_is_not_missing():
    month = month_generate(payments=400, merchants=1, days=4, refund_every=10, chargebacks=0,
                           faults={"not_settled": 3})
    early = reconcile(as_of=month.start + timedelta(days=1))
    assert early.found["not_settled"] < 3
    late = reconcile(as_of=month.end + timedelta(days=3))
    assert ReconException.objects.filter(kind="not_settled").count() == 3
    assert early.found["not_settled"] + late.found["not_settled"] == 3
