"""Razorpay writes amounts as integer paise, as we do ("amount in currency subunits": its Orders,
Payments and Refunds APIs). The two functions here are still the one place an amount crosses, so
that a float, a negative or a rupee decimal is refused rather than sent or believed."""
from __future__ import annotations


def paise_out(paise: int) -> int:
    """Our paise as Razorpay's `amount`: the same integer. Refuses anything but a non-negative int."""
    if isinstance(paise, bool) or not isinstance(paise, int):
        raise TypeError(f"paise must be an int, not {type(paise).__name__}")
    if paise < 0:
        raise ValueError("paise must not be negative")
    return paise


def paise_in(value) -> int:
    """Razorpay's `amount` as our paise: an integer, never a float (an amount written 5.5 is not
    Razorpay's), never negative. ValueError / TypeError otherwise."""
    if isinstance(value, bool) or isinstance(value, float):
        raise TypeError("a Razorpay amount is an integer number of paise, not a float")
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit()):
            raise ValueError(f"not an amount in paise: {value!r}")
        value = int(value)
    if not isinstance(value, int):
        raise TypeError(f"not an amount in paise: {value!r}")
    if value < 0:
        raise ValueError("an amount must not be negative")
    return value
