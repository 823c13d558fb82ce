"""Issue 28, cards: production's default card mode never brings a card number to this process,
and our own card form is taken in production only beside the operator's PCI DSS declaration."""
from __future__ import annotations

import pytest

from payments.services.acquirer_methods import acquirer_methods
from tests.acquirer_cashfree.test_production_start import CASHFREE, PRODUCTION, run


def test_production_with_our_own_card_form_and_no_pci_declaration_is_refused_naming_both():
    result = run(["check"], **PRODUCTION, **CASHFREE, CARD_FORM_MODE="own")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "CARD_FORM_MODE=own" in result.stderr and "PCI_DSS_COMPLIANT=true" in result.stderr


def test_production_with_our_own_card_form_and_the_pci_declaration_starts():
    result = run(["check"], **PRODUCTION, **CASHFREE, CARD_FORM_MODE="own", PCI_DSS_COMPLIANT="true")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("env", [{}, {**PRODUCTION, **CASHFREE}], ids=["staging", "production"])
def test_an_unknown_card_form_mode_is_refused_at_start(env):
    result = run(["check"], **env, CARD_FORM_MODE="iframe")
    assert result.returncode != 0 and "CARD_FORM_MODE must be 'processor' or 'own'" in result.stderr


def test_production_defaults_to_the_processor_mode_and_staging_to_our_form():
    probe = "from django.conf import settings; print(settings.CARD_FORM_MODE)"
    production = run(["shell", "-c", probe], **PRODUCTION, **CASHFREE)
    staging = run(["shell", "-c", probe])
    assert production.stdout.strip().splitlines()[-1] == "processor", production.stderr
    assert staging.stdout.strip().splitlines()[-1] == "own", staging.stderr


def test_in_the_processor_mode_cards_need_an_acquirer_with_card_fields(settings, monkeypatch):
    """The sandbox has no card fields of its own: in the processor mode its card method is left
    out rather than collected by our form. Cashfree's fields (Cashfree.js) carry it."""
    from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
    from tests.payments.hosted.doubles import use_acquirer

    settings.CARD_FORM_MODE = "own"
    assert "CARD" in acquirer_methods()
    settings.CARD_FORM_MODE = "processor"
    assert "CARD" not in acquirer_methods() and "UPI" in acquirer_methods()
    use_acquirer(monkeypatch, CashfreeAcquirer(object()))
    assert "CARD" in acquirer_methods()


def test_production_refuses_a_cashfree_js_other_than_cashfrees_own():
    result = run(["check"], **PRODUCTION, **CASHFREE, CASHFREE_JS_URL="https://cdn.example.com/cashfree.js")
    assert result.returncode != 0
    assert "CASHFREE_JS_URL must be Cashfree's own https://sdk.cashfree.com/js/v3/cashfree.js" in result.stderr
