"""The one conversion between paise (everywhere) and rupees (only where the interface asks)."""
from decimal import Decimal


def paise_to_rupees(paise: int) -> Decimal:
    """12345 -> Decimal('123.45'); exact, never through a float."""
    return (Decimal(int(paise)) / 100).quantize(Decimal("0.01"))


def rupees_str(paise: int) -> str:
    """For UPI links and display: always two decimals, '123.45'."""
    return f"{paise_to_rupees(paise):.2f}"


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
