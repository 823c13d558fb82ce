"""A settlement sums to the paisa: net = gross − fees − tax − refunds − chargebacks ± adjustments,
for any mix of events (Hypothesis)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from refunds.settlements.arithmetic import KINDS, Totals, expected_net, settlement_sums, totals_of

paise = st.integers(min_value=0, max_value=10**12)
event = st.tuples(st.sampled_from(KINDS), paise, st.integers(0, 10**9), st.integers(0, 10**9),
                  st.booleans())


def _line(kind, amount, fee, tax, debit):
    return (kind, -amount if kind == "adjustment" and debit else amount, fee, tax)


@given(st.lists(event, max_size=200))
def test_any_mix_of_events_sums_exactly(events):
    lines = [_line(*item) for item in events]
    # Each event on its own: what it adds to the payout, money in minus money out.
    paid_out = 0
    for kind, amount, fee, tax in lines:
        paid_out += (amount if kind in ("payment", "adjustment") else -amount) - fee - tax
    totals = totals_of(lines)
    assert expected_net(totals) == paid_out
    assert settlement_sums(totals, paid_out)


@given(st.lists(event, min_size=1, max_size=50), st.integers(min_value=1, max_value=10**6))
def test_one_paisa_off_does_not_sum(events, off):
    totals = totals_of([_line(*item) for item in events])
    assert not settlement_sums(totals, expected_net(totals) + off)
    assert not settlement_sums(totals, expected_net(totals) - off)


def test_the_stated_formula():
    totals = Totals(gross=100_000, fees=2_000, tax=360, refunds=5_000, chargebacks=1_000,
                    adjustments=-250)
    assert expected_net(totals) == 100_000 - 2_000 - 360 - 5_000 - 1_000 - 250


@pytest.mark.parametrize("bad", [1.5, "10", True, None])
def test_only_integer_paise(bad):
    with pytest.raises(TypeError):
        totals_of([("payment", bad, 0, 0)])


def test_unknown_kind_and_negative_terms_refused():
    with pytest.raises(ValueError, match="kind"):
        totals_of([("fee", 1, 0, 0)])
    with pytest.raises(ValueError, match="amount"):
        totals_of([("refund", -1, 0, 0)])
    with pytest.raises(ValueError, match="fee"):
        totals_of([("payment", 1, -1, 0)])
