"""Card-number checks that run in memory only: nothing here stores or logs a number."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_NETWORKS = (
    ("AMEX", re.compile(r"^3[47]")),
    ("RUPAY", re.compile(r"^(60|65|81|82|508|353|356)")),
    ("VISA", re.compile(r"^4")),
    ("MASTERCARD", re.compile(r"^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))")),
    ("DINERS", re.compile(r"^(30[0-5]|36|38)")),
)


def digits_only(number: str) -> str:
    return re.sub(r"[\s-]", "", number or "")


def luhn_valid(number: str) -> bool:
    if not number.isdigit() or not 12 <= len(number) <= 19:
        return False
    total = 0
    for index, char in enumerate(reversed(number)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def detect_network(number: str) -> str:
    for name, pattern in _NETWORKS:
        if pattern.match(number):
            return name
    return "UNKNOWN"


@dataclass(frozen=True)
class CardInput:
    """A card as typed by the customer. Lives only for the request that carries it."""

    number: str
    expiry_month: int
    expiry_year: int  # four digits
    cvv: str

    @property
    def last4(self) -> str:
        return self.number[-4:]

    @property
    def network(self) -> str:
        return detect_network(self.number)

    def __repr__(self) -> str:  # never let a traceback or log print the number or CVV
        return f"CardInput(last4={self.last4}, network={self.network})"

    __str__ = __repr__


# What a customer types for an expiry, on a phone keypad without "/" too: 12/29, 12 / 2029,
# 12-29, 1229, 122029, 1/29. Month first, then a two- or four-digit year.
_EXPIRY = re.compile(r"(?P<month>\d{1,2})\s*[/\-.]\s*(?P<year>\d{2}|\d{4})|(?P<m>\d{2})(?P<y>\d{2}|\d{4})")


def parse_expiry(value: str, *, today: date | None = None) -> tuple[int, int]:
    """An expiry as typed ('12/29', '12 / 2029', '1229', '12-29'...) -> (month, four-digit
    year). Raises ValueError when malformed or in the past."""
    match = _EXPIRY.fullmatch((value or "").strip())
    if not match:
        raise ValueError("expiry must be MM/YY")
    month = int(match.group("month") or match.group("m"))
    year = match.group("year") or match.group("y")
    year = int(year) if len(year) == 4 else 2000 + int(year)
    if not 1 <= month <= 12:
        raise ValueError("expiry month must be 01 to 12")
    today = today or date.today()
    if (year, month) < (today.year, today.month):
        raise ValueError("the card has expired")
    return month, year
