"""How the console writes money and methods for people."""
from __future__ import annotations

from django.utils import timezone

from gateway.core.money import rupees_str

# How staff name the methods (Payment.Mode's automatic labels read "Upi", "Nb").
METHOD_LABELS = {"UPI": "UPI", "CARD": "Card", "NB": "Net banking", "WALLET": "Wallet", "NEFT": "NEFT",
                 "RTGS": "RTGS", "CHALLAN": "Cash challan"}


def method_label(mode: str) -> str:
    return METHOD_LABELS.get(mode, mode) if mode else "not chosen yet"


def indian_grouping(whole: str) -> str:
    """'1234567' -> '12,34,567': thousands, then lakhs and crores, as Indian finance reads them."""
    if len(whole) <= 3:
        return whole
    head, tail = whole[:-3], whole[-3:]
    pairs = []
    while len(head) > 2:
        head, pair = head[:-2], head[-2:]
        pairs.insert(0, pair)
    return ",".join([head, *pairs, tail])


def money(paise: int | None) -> str:
    """'₹1,499.00 (149900 paise)': rupees for people, paise as every record keeps them."""
    if paise is None:
        return "—"
    if paise < 0:
        return f"−₹{rupees(-paise)} (−{-paise} paise)"
    return f"₹{rupees(paise)} ({paise} paise)"


def rupees(paise: int) -> str:
    """'12,34,567.89' for 123456789 paise (never negative: callers write the sign)."""
    whole, _, fraction = rupees_str(paise).partition(".")
    return f"{indian_grouping(whole)}.{fraction}"


def short_time(moment) -> str:
    """'26 Nov 2026, 14:05' in India time, for list columns that must stay narrow."""
    return "—" if moment is None else f"{timezone.localtime(moment):%d %b %Y, %H:%M}"
