"""Does a settlement add up, to the paisa? Pure functions over integer paise, no database.

    net = gross − fees − tax − refunds − chargebacks + adjustments

where `adjustments` is signed (a credit adds, a debit takes away) and every other term is
never negative. Integers only: there is no rounding anywhere, so "sums to the paisa" means
plain equality.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

PAYMENT, REFUND, CHARGEBACK, ADJUSTMENT = "payment", "refund", "chargeback", "adjustment"
KINDS = (PAYMENT, REFUND, CHARGEBACK, ADJUSTMENT)


@dataclass(frozen=True)
class Totals:
    gross: int = 0
    fees: int = 0
    tax: int = 0
    refunds: int = 0
    chargebacks: int = 0
    adjustments: int = 0


def _paise(name: str, value: object, *, signed: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be integer paise, not {type(value).__name__}")
    if not signed and value < 0:
        raise ValueError(f"{name} must not be negative")
    return value


def expected_net(totals: Totals) -> int:
    """The net a settlement with these totals pays out."""
    return (_paise("gross", totals.gross) - _paise("fees", totals.fees) - _paise("tax", totals.tax)
            - _paise("refunds", totals.refunds) - _paise("chargebacks", totals.chargebacks)
            + _paise("adjustments", totals.adjustments, signed=True))


def settlement_sums(totals: Totals, net: int) -> bool:
    """True when `net` is exactly what the totals pay out."""
    return expected_net(totals) == _paise("net", net, signed=True)


def totals_of(lines: Iterable[tuple[str, int, int, int]]) -> Totals:
    """The totals of a settlement's lines, each `(kind, amount, fee, tax)`: payments make the
    gross, refunds and chargebacks their own terms, adjustments (signed) theirs; every line's
    fee and tax count, whatever its kind."""
    sums = {kind: 0 for kind in KINDS}
    fees = tax = 0
    for kind, amount, fee, line_tax in lines:
        if kind not in sums:
            raise ValueError(f"a settlement line's kind is one of {KINDS}, not {kind!r}")
        sums[kind] += _paise("amount", amount, signed=kind == ADJUSTMENT)
        fees += _paise("fee", fee)
        tax += _paise("tax", line_tax)
    return Totals(gross=sums[PAYMENT], fees=fees, tax=tax, refunds=sums[REFUND],
                  chargebacks=sums[CHARGEBACK], adjustments=sums[ADJUSTMENT])


# -- what a line's fee and tax should be ---------------------------------------------------------
#
# GST on an acquirer's fee is 18 %. A rate gives a fraction of a paisa; the rule, per line:
# round half up to the paisa (0.5 paisa and above goes up), the percentage part of the fee
# first, then the GST on the whole fee. Integer arithmetic only: (x * n + d // 2) // d.

GST_PERCENT = 18
BASIS_POINTS = 10_000


def _half_up(numerator: int, denominator: int) -> int:
    return (numerator + denominator // 2) // denominator


def agreed_fee(amount: int, *, percent_bp: int, fixed: int) -> int:
    """The fee in paise on a payment of `amount` paise at `percent_bp` basis points of it plus
    `fixed` paise, rounded half up to the paisa."""
    return _half_up(_paise("amount", amount) * _paise("percent_bp", percent_bp), BASIS_POINTS) + _paise("fixed", fixed)


def gst_on(fee: int) -> int:
    """18 % of `fee` paise, rounded half up to the paisa."""
    return _half_up(_paise("fee", fee) * GST_PERCENT, 100)
