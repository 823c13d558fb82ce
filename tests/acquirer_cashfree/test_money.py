"""Paise to Cashfree's rupees and back: exact at the edges, never rounded."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from payments.acquirer.cashfree.money import json_number, paise_to_rupees, rupees_to_paise

# interface.md: a payment is 100 to 100000000 paise.
LARGEST_PAYMENT = 100_000_000


@pytest.mark.parametrize("paise, rupees", [
    (0, "0.00"), (1, "0.01"), (9, "0.09"), (10, "0.10"), (99, "0.99"), (100, "1.00"),
    (101, "1.01"), (10050, "100.50"), (LARGEST_PAYMENT, "1000000.00"),
    (LARGEST_PAYMENT - 1, "999999.99"),
])
def test_paise_become_rupees_with_two_places(paise, rupees):
    assert paise_to_rupees(paise) == Decimal(rupees)
    assert str(paise_to_rupees(paise)) == rupees
    assert rupees_to_paise(Decimal(rupees)) == paise


@pytest.mark.parametrize("value", [1.5, True, "12", None])
def test_paise_must_be_an_int(value):
    with pytest.raises(TypeError):
        paise_to_rupees(value)


def test_negative_paise_are_refused():
    with pytest.raises(ValueError):
        paise_to_rupees(-1)


@pytest.mark.parametrize("rupees, paise", [
    (Decimal("22"), 2200), (22, 2200), ("10.5", 1050), (Decimal("0.01"), 1),
    (Decimal("10.500"), 1050), (Decimal("0"), 0), (Decimal("1E+2"), 10000),
])
def test_cashfree_amounts_read_as_paise(rupees, paise):
    assert rupees_to_paise(rupees) == paise


@pytest.mark.parametrize("rupees", [Decimal("0.001"), Decimal("10.005"), "1.999", Decimal("NaN"),
                                    Decimal("Infinity"), Decimal("-0.01"), "ten", ""])
def test_amounts_not_a_whole_number_of_paise_are_refused(rupees):
    with pytest.raises(ValueError):
        rupees_to_paise(rupees)


@pytest.mark.parametrize("rupees", [0.1, True])
def test_floats_and_booleans_are_refused_as_rupees(rupees):
    with pytest.raises(TypeError):
        rupees_to_paise(rupees)


@pytest.mark.parametrize("paise", [1, 7, 10, 29, 57, 110, 10050, 123456789, LARGEST_PAYMENT,
                                   LARGEST_PAYMENT - 1])
def test_the_json_number_reads_back_exactly(paise):
    written = json.dumps({"amount": json_number(paise_to_rupees(paise))})
    assert rupees_to_paise(json.loads(written, parse_float=Decimal)["amount"]) == paise


def test_an_amount_json_cannot_carry_exactly_is_refused():
    with pytest.raises(ValueError):
        json_number(Decimal("12345678901234567.89"))


@given(st.integers(min_value=0, max_value=10 * LARGEST_PAYMENT))
def test_paise_survive_the_wire_both_ways(paise):
    text = json.dumps(json_number(paise_to_rupees(paise)))
    assert rupees_to_paise(json.loads(text, parse_float=Decimal)) == paise
