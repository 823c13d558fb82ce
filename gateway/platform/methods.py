"""Which of the seven hosted-checkout methods a merchant offers, and for which amounts.

Each method has a rule: the range of amounts the banking rules allow it at all (a merchant's
limits must lie inside it) and the default limits a merchant starts with. Every figure and its
source is in docs/decisions.md ("Payment methods and their amount limits"). A merchant's own
choices are kept on the merchant row (`Merchant.payment_methods`, only the methods it changed),
so the hosted API, which reads the merchant with the API key, needs no query more to check a
session's amount.

Amounts are integer paise. The method codes are the interface's `paymentMode` values (the same
as payments.models.Payment.Mode, which tests/gateway/test_methods.py holds equal).
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from gateway.core.errors import ValidationError

# The gateway's own bounds of a hosted amount (payments/api/hosted_serializers.py keeps the
# same figures for the API): no method's limit may go past them.
GATEWAY_MIN_PAISE = 100
GATEWAY_MAX_PAISE = 100_000_000

UPI, CARD, NB, WALLET, NEFT, RTGS, CHALLAN = "UPI", "CARD", "NB", "WALLET", "NEFT", "RTGS", "CHALLAN"
CODES = (UPI, CARD, NB, WALLET, NEFT, RTGS, CHALLAN)
LABELS = {UPI: "UPI", CARD: "Card", NB: "Net banking", WALLET: "Wallet", NEFT: "NEFT", RTGS: "RTGS",
          CHALLAN: "Cash challan"}


@dataclass(frozen=True)
class Rule:
    """What the banking rules allow (`floor` to `ceiling`) and where a merchant starts."""

    floor: int
    ceiling: int
    default_min: int
    default_max: int


RULES: dict[str, Rule] = {
    # NPCI: UPI's per-transaction limit is Rs 1,00,000 for most merchant payments, up to
    # Rs 5,00,000 for the categories NPCI raised (tax, hospitals, education, ...).
    UPI: Rule(GATEWAY_MIN_PAISE, 50_000_000, GATEWAY_MIN_PAISE, 10_000_000),
    # No regulatory limit: the card's own limit is the issuer's to enforce.
    CARD: Rule(GATEWAY_MIN_PAISE, GATEWAY_MAX_PAISE, GATEWAY_MIN_PAISE, GATEWAY_MAX_PAISE),
    # No regulatory limit: the customer's bank sets its own.
    NB: Rule(GATEWAY_MIN_PAISE, GATEWAY_MAX_PAISE, GATEWAY_MIN_PAISE, GATEWAY_MAX_PAISE),
    # RBI Master Direction on PPIs: a full-KYC wallet holds at most Rs 2,00,000.
    WALLET: Rule(GATEWAY_MIN_PAISE, 20_000_000, GATEWAY_MIN_PAISE, 20_000_000),
    # RBI: NEFT has no minimum and no maximum.
    NEFT: Rule(GATEWAY_MIN_PAISE, GATEWAY_MAX_PAISE, GATEWAY_MIN_PAISE, GATEWAY_MAX_PAISE),
    # RBI: RTGS is for Rs 2,00,000 and above, with no maximum.
    RTGS: Rule(20_000_000, GATEWAY_MAX_PAISE, 20_000_000, GATEWAY_MAX_PAISE),
    # Income-tax Act s. 269ST: no one may receive Rs 2,00,000 or more in cash in one transaction.
    CHALLAN: Rule(GATEWAY_MIN_PAISE, 19_999_999, GATEWAY_MIN_PAISE, 19_999_999),
}


@dataclass(frozen=True)
class MethodLimit:
    code: str
    enabled: bool
    min: int
    max: int

    def takes(self, amount: int) -> bool:
        return self.enabled and self.min <= amount <= self.max

    def as_dict(self) -> dict:
        return {"enabled": self.enabled, "min": self.min, "max": self.max}


def default_limit(code: str) -> MethodLimit:
    rule = RULES[code]
    return MethodLimit(code, True, rule.default_min, rule.default_max)


def method_limits(config: dict | None) -> list[MethodLimit]:
    """Every method's limit for a merchant whose stored choices are `config`
    (`Merchant.payment_methods`), in the checkout's order. A method the merchant never changed
    has its default; a stored value outside today's rule (the rule tightened since) is held to
    the rule, so a stale row can never offer what the rules forbid."""
    config = config or {}
    limits = []
    for code in CODES:
        rule, stored = RULES[code], config.get(code)
        if not isinstance(stored, dict):
            limits.append(default_limit(code))
            continue
        low = max(rule.floor, int(stored.get("min", rule.default_min)))
        high = min(rule.ceiling, int(stored.get("max", rule.default_max)))
        limits.append(MethodLimit(code, bool(stored.get("enabled", True)) and low <= high, low, high))
    return limits


def methods_for_amount(config: dict | None, amount: int, *, carried: Collection[str]) -> list[str]:
    """The codes of the methods offered for `amount`, in the checkout's order: those the
    merchant offers for it (`config`, its stored choices) that the acquirer carries (`carried`,
    the acquirer's own `methods`, which the caller passes: a method it cannot carry, a cash
    challan with Cashfree, is offered to no one, whatever a merchant stored)."""
    return [limit.code for limit in method_limits(config) if limit.takes(amount) and limit.code in carried]


def ensure_some_method_takes(config: dict | None, amount: int, *, carried: Collection[str]) -> None:
    """Raises ValidationError naming `amount` when no method the merchant offers and the
    acquirer carries takes it, saying which ranges the merchant does take."""
    if methods_for_amount(config, amount, carried=carried):
        return
    offered = [f"{limit.code} {limit.min} to {limit.max}" for limit in method_limits(config)
               if limit.enabled and limit.code in carried]
    ranges = "; ".join(offered) if offered else "none is enabled"
    raise ValidationError(f"no payment method this merchant offers takes {amount} paise (paise: {ranges})",
                          field="amount")


def ensure_method_takes(config: dict | None, code: str, amount: int, *, carried: Collection[str]) -> None:
    """Raises ValidationError naming `paymentMode` when `code` is not offered for `amount`:
    the page never shows such a method, so only a forged form gets here."""
    if code not in methods_for_amount(config, amount, carried=carried):
        raise ValidationError(f"{LABELS.get(code, code)} is not offered for this amount", field="paymentMode")


def methods_config_clean(limits: dict[str, dict]) -> dict:
    """Check a merchant's choices ({code: {"enabled", "min", "max"}}) against the rules and
    return what to store: only the methods that differ from their default. Raises
    ValidationError naming the method's field (e.g. `RTGS.min`) for a value outside the
    rule, a minimum above the maximum, or no method enabled at all."""
    stored = {}
    for code, values in limits.items():
        if code not in RULES:
            raise ValidationError("is not a payment method", field=code)
        rule = RULES[code]
        enabled, low, high = bool(values["enabled"]), values["min"], values["max"]
        for name, value in (("min", low), ("max", high)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValidationError("must be a whole number of paise", field=f"{code}.{name}")
            if not rule.floor <= value <= rule.ceiling:
                raise ValidationError(f"must be between {rule.floor} and {rule.ceiling} paise for {code}",
                                      field=f"{code}.{name}")
        if low > high:
            raise ValidationError("must not be above the maximum", field=f"{code}.min")
        limit = MethodLimit(code, enabled, low, high)
        if limit != default_limit(code):
            stored[code] = limit.as_dict()
    if not any(limit.enabled for limit in method_limits(stored)):
        raise ValidationError("at least one payment method must be offered", field="payment_methods")
    return stored
