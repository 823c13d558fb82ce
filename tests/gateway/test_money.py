"""gateway.core.money: rupees as staff type them (issue 26: the console refused "1,000")."""
from decimal import Decimal

import pytest

from gateway.core.money import rupees_parse, rupees_to_paise


@pytest.mark.parametrize("typed, rupees", [
    ("1000", "1000"), ("1,000", "1000"), ("1,000.50", "1000.50"), ("1,00,000", "100000"),
    ("12,34,567.8", "1234567.8"), ("10,00,00,000", "100000000"), ("100,000", "100000"),
    ("1,000,000.25", "1000000.25"), ("₹1,000", "1000"), ("₹ 499", "499"), ("Rs. 2,500", "2500"),
    ("  99.5 ", "99.5"), ("0.01", "0.01"),
])
def test_rupees_are_read_with_indian_or_international_grouping(typed, rupees):
    assert rupees_parse(typed) == Decimal(rupees)


@pytest.mark.parametrize("typed", [
    "1,0000", "1,00", "1,00,00", "12,345,67", ",100", "100,", "1.000,50", "1 000", "1,000.505",
    "-5", "+5", "1e3", "NaN", "Infinity", "", "ten", "१०००", "1,000.", "$100",
])
def test_anything_else_is_refused_rather_than_guessed(typed):
    with pytest.raises(ValueError, match="commas only between groups"):
        rupees_parse(typed)


def test_parsed_rupees_convert_to_paise_exactly():
    assert rupees_to_paise(rupees_parse("1,00,000.50")) == 10_000_050
