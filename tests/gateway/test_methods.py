"""gateway.platform.methods: the seven checkout methods, their banking-rule limits and a merchant's own."""
from __future__ import annotations

import pytest

from gateway.platform import methods
from gateway.core.errors import ValidationError
from payments.models import Payment

LAKH = 100_000 * 100  # Rs 1,00,000 in paise


def test_the_methods_are_the_payment_modes_of_the_interface():
    assert set(methods.CODES) == set(Payment.Mode.values) == set(methods.RULES)


def test_defaults_follow_the_banking_rules():
    limits = {limit.code: limit for limit in methods.method_limits({})}
    assert (limits["RTGS"].min, limits["RTGS"].max) == (2 * LAKH, 100_000_000)  # RTGS from Rs 2 lakh
    assert limits["UPI"].max == LAKH  # NPCI's usual per-transaction limit
    assert limits["WALLET"].max == 2 * LAKH  # a full-KYC wallet holds at most Rs 2 lakh
    assert limits["CHALLAN"].max == 2 * LAKH - 1  # s. 269ST: less than Rs 2 lakh in cash
    assert all(limit.enabled for limit in limits.values())


@pytest.mark.parametrize(("amount", "offered"), [
    (49_900, ["UPI", "CARD", "NB", "WALLET", "NEFT", "CHALLAN"]),  # a Rs 499 order: no RTGS
    (LAKH, ["UPI", "CARD", "NB", "WALLET", "NEFT", "CHALLAN"]),
    (LAKH + 1, ["CARD", "NB", "WALLET", "NEFT", "CHALLAN"]),
    (2 * LAKH - 1, ["CARD", "NB", "WALLET", "NEFT", "CHALLAN"]),
    (2 * LAKH, ["CARD", "NB", "WALLET", "NEFT", "RTGS"]),
    (100_000_000, ["CARD", "NB", "NEFT", "RTGS"]),
])
def test_a_session_is_offered_the_methods_its_amount_fits(amount, offered):
    assert methods.methods_for_amount({}, amount, carried=methods.CODES) == offered


def test_a_merchants_own_limits_and_switched_off_methods_apply():
    config = {"CARD": {"enabled": False, "min": 100, "max": 100_000_000},
              "UPI": {"enabled": True, "min": 10_000, "max": 50_000}}
    assert "CARD" not in methods.methods_for_amount(config, 20_000, carried=methods.CODES)
    assert "UPI" in methods.methods_for_amount(config, 20_000, carried=methods.CODES)
    assert "UPI" not in methods.methods_for_amount(config, 9_999, carried=methods.CODES)


def test_a_stored_limit_outside_todays_rules_is_held_to_them():
    stale = {"RTGS": {"enabled": True, "min": 100, "max": 100_000_000}}
    assert "RTGS" not in methods.methods_for_amount(stale, 49_900, carried=methods.CODES)


def test_no_offered_method_is_a_validation_error_naming_amount():
    only_rtgs = {code: {"enabled": code == "RTGS", "min": methods.RULES[code].default_min,
                        "max": methods.RULES[code].default_max} for code in methods.CODES}
    with pytest.raises(ValidationError) as caught:
        methods.ensure_some_method_takes(only_rtgs, 49_900, carried=methods.CODES)
    assert caught.value.field == "amount" and caught.value.message.startswith("amount: ")
    assert "RTGS 20000000 to 100000000" in caught.value.message
    methods.ensure_some_method_takes(only_rtgs, 20_000_000, carried=methods.CODES)


def test_a_method_the_acquirer_does_not_carry_is_offered_to_no_one():
    """The carried methods are an argument (the acquirer's own `methods`, passed by the caller):
    a cash challan with an acquirer that carries none is neither offered nor accepted."""
    carried = set(methods.CODES) - {"CHALLAN"}
    assert "CHALLAN" in methods.methods_for_amount({}, 149_900, carried=methods.CODES)
    assert methods.methods_for_amount({}, 149_900, carried=carried) == ["UPI", "CARD", "NB", "WALLET", "NEFT"]
    with pytest.raises(ValidationError, match="not offered"):
        methods.ensure_method_takes({}, "CHALLAN", 149_900, carried=carried)
    only_challan = {code: {"enabled": code == "CHALLAN", "min": 100, "max": 19_999_999} for code in methods.CODES}
    with pytest.raises(ValidationError, match="none is enabled"):
        methods.ensure_some_method_takes(only_challan, 149_900, carried=carried)


def full(**changes) -> dict:
    limits = {code: methods.default_limit(code).as_dict() for code in methods.CODES}
    for code, values in changes.items():
        limits[code] = {**limits[code], **values}
    return limits


def test_only_what_differs_from_the_defaults_is_stored():
    assert methods.methods_config_clean(full()) == {}
    assert methods.methods_config_clean(full(NEFT={"enabled": False})) == {
        "NEFT": {"enabled": False, "min": 100, "max": 100_000_000}}


@pytest.mark.parametrize(("changes", "field"), [
    ({"RTGS": {"min": 19_999_999}}, "RTGS.min"),        # below RTGS's floor
    ({"CHALLAN": {"max": 20_000_000}}, "CHALLAN.max"),  # Rs 2 lakh in cash
    ({"UPI": {"max": 50_000_001}}, "UPI.max"),
    ({"CARD": {"min": 99}}, "CARD.min"),
    ({"CARD": {"min": 5_000, "max": 4_000}}, "CARD.min"),
    ({"NB": {"min": "100"}}, "NB.min"),
])
def test_limits_outside_the_rules_are_refused_naming_the_field(changes, field):
    with pytest.raises(ValidationError) as caught:
        methods.methods_config_clean(full(**changes))
    assert caught.value.field == field


def test_a_merchant_must_offer_at_least_one_method():
    with pytest.raises(ValidationError) as caught:
        methods.methods_config_clean(full(**{code: {"enabled": False} for code in methods.CODES}))
    assert caught.value.field == "payment_methods"
