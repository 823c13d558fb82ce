"""The one conversion between paise (everywhere) and rupees (only where the interface asks)."""
import re
from decimal import Decimal


def paise_to_rupees(paise: int) -> Decimal:
    """12345 -> Decimal('123.45'); exact, never through a float."""
    return (Decimal(int(paise)) / 100).quantize(Decimal("0.01"))


def rupees_str(paise: int) -> str:
    """For UPI links and display: always two decimals, '123.45'."""
    return f"{paise_to_rupees(paise):.2f}"


def format_inr(paise: int) -> str:
    """₹ with Indian digit grouping: 12345678 paise -> '₹1,23,456.78'."""
    whole, fraction = rupees_str(paise).split(".")
    if len(whole) > 3:
        head, tail = whole[:-3], whole[-3:]
        groups = []
        while len(head) > 2:
            groups.insert(0, head[-2:])
            head = head[:-2]
        if head:
            groups.insert(0, head)
        whole = ",".join(groups + [tail])
    return f"₹{whole}.{fraction}"


def rupees_number(paise: int) -> float:
    """For JSON fields the interface types as a number of rupees (enquiry paidAmount)."""
    return float(paise_to_rupees(paise))


def rupees_to_paise(rupees) -> int:
    """Decimal('100') -> 10000, for amounts people type in rupees (the console's refund and
    payment-link forms). Raises ValueError for a fraction of a paisa; never through a float."""
    paise = Decimal(rupees) * 100
    if paise != paise.to_integral_value():
        raise ValueError("more than two decimal places")
    return int(paise)


# What people write for an amount of rupees: digits, grouped by commas the Indian way (the last
# three digits, then pairs: 1,00,000 and 12,34,567) or the international way (threes:
# 100,000), or not grouped at all; then at most two decimals. A currency sign in front is
# allowed. Anything else (a comma elsewhere, a decimal comma, spaces inside, signs, exponents)
# is refused rather than guessed at: "1,50" might mean 1.50 or 150.
_RUPEES = re.compile(r"""
    (?:₹|rs\.?|inr)?\s*
    (?P<whole> [0-9]+ | [0-9]{1,2}(?:,[0-9]{2})*,[0-9]{3} | [0-9]{1,3}(?:,[0-9]{3})+ )
    (?:\.(?P<fraction>[0-9]{1,2}))?
""", re.VERBOSE | re.IGNORECASE)


def rupees_parse(text: str) -> Decimal:
    """'1,00,000.50' -> Decimal('100000.50'): an amount of rupees as staff type it (the console's
    refund and payment-link forms). Raises ValueError, saying what is accepted, for anything
    that is not one clear amount (see _RUPEES)."""
    found = _RUPEES.fullmatch(text.strip())
    if found is None:
        raise ValueError("write rupees as digits, with commas only between groups (1,000 or 1,00,000) "
                         "and at most two decimals after a point (1,000.50)")
    return Decimal(found["whole"].replace(",", "") + "." + (found["fraction"] or "0"))
