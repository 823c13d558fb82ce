"""Paise (ours) to rupees (Cashfree's) and back, exactly.

Our code keeps money as integer paise. Cashfree's API writes amounts as rupee decimals
(`order_amount: 10.50`). The two functions here are the only place the two meet: both work in
`Decimal`, both refuse a value they cannot convert without loss rather than round it.
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

_PAISE_PER_RUPEE = 100
_TWO_PLACES = Decimal("0.01")


def paise_to_rupees(paise: int) -> Decimal:
    """`1050` paise -> `Decimal("10.50")`. Refuses anything but a non-negative int."""
    if isinstance(paise, bool) or not isinstance(paise, int):
        raise TypeError(f"paise must be an int, not {type(paise).__name__}")
    if paise < 0:
        raise ValueError("paise must not be negative")
    return (Decimal(paise) / _PAISE_PER_RUPEE).quantize(_TWO_PLACES)


def rupees_to_paise(rupees: Decimal | int | str) -> int:
    """Cashfree's `10.5` (read as a Decimal) -> `1050`. A float is refused (it may already have
    lost the amount); so is a fraction of a paisa, a negative, NaN or infinity."""
    if isinstance(rupees, bool) or isinstance(rupees, float):
        raise TypeError("rupees must be a Decimal, int or str, not a float")
    try:
        value = Decimal(rupees) if not isinstance(rupees, Decimal) else rupees
    except (InvalidOperation, ValueError, TypeError) as exc:
        raise ValueError(f"not an amount in rupees: {rupees!r}") from exc
    if not value.is_finite():
        raise ValueError(f"not an amount in rupees: {rupees!r}")
    paise = value * _PAISE_PER_RUPEE
    if paise != paise.to_integral_value():
        raise ValueError(f"{rupees!r} rupees is not a whole number of paise")
    if paise < 0:
        raise ValueError("an amount must not be negative")
    return int(paise)


def json_number(rupees: Decimal) -> float:
    """The float that `json.dumps` writes as exactly `rupees` (Python writes the shortest
    digits that read back as the same float, so any amount of up to 15 significant digits
    comes out as written). Checked, never assumed: a value that would change raises."""
    number = float(rupees)
    if Decimal(repr(number)) != rupees:
        raise ValueError(f"{rupees} rupees cannot be written exactly as a JSON number")
    return number
