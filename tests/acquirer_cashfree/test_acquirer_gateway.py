"""The gateway with Cashfree as its acquirer: the S2S reply carries Cashfree's own upi:// link,
and the checkout offers only the methods Cashfree carries. Cashfree is Prism serving its own
description (every request checked), with the order pay answer scripted where Prism's
example is a card's (tests/acquirer_cashfree/test_acquirer.py, ScriptedPrism)."""
from __future__ import annotations

import pytest
from django.test import Client

from gateway.core.errors import ValidationError
from payments import acquirer as acquirers
from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
from payments.models import Payment, PaymentEvent
from payments.services.acquirer_methods import acquirer_methods
from payments.services.transitions import payment_mark_processing
from tests.payments.hosted.conftest import create_session  # noqa: F401 - a fixture
from tests.payments.hosted.doubles import use_acquirer
from tests.payments.s2s.conftest import post, s2s_merchant  # noqa: F401 - fixtures
from tests.support.factories import signed_body

from .test_acquirer import INTENT, PRISM_ORDER_AMOUNT, acquirer, cashfree  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

INTENT_ANSWER = (200, {"cf_payment_id": "91235", "payment_method": "upi", "channel": "link", "action": "custom",
                       "payment_amount": 22, "data": {"url": None, "payload": INTENT}})


@pytest.fixture
def on_cashfree(monkeypatch, acquirer, cashfree):
    cashfree.script[("POST", "/orders/sessions")] = INTENT_ANSWER
    use_acquirer(monkeypatch, acquirer)
    return cashfree


@pytest.mark.parametrize("mode, field", [("UPI_QR", "upiQrString"), ("UPI_INTENT", "intentUrl")])
def test_s2s_answers_cashfrees_own_link(on_cashfree, post, s2s_merchant, mode, field):
    response = post(s2s_merchant, signed_body(s2s_merchant, amount=PRISM_ORDER_AMOUNT, paymentMode=mode))
    assert response.status_code == 201, response.content
    body = response.json()
    assert body[field] == INTENT["default"]
    payment = Payment.objects.get(payment_id=body["paymentId"])
    registered = payment.events.get(kind=PaymentEvent.Kind.ACQUIRER)
    assert registered.detail["upi_link"] == INTENT["default"]
    order = [e for e in on_cashfree.exchanges if e.path == "/orders"][0]
    assert order.body["order_id"] == payment.sabpaisa_txn_id


def test_an_s2s_replay_answers_the_same_cashfree_link(on_cashfree, post, s2s_merchant):
    body = signed_body(s2s_merchant, amount=PRISM_ORDER_AMOUNT)
    first = post(s2s_merchant, body, key="k-cashfree-1")
    again = post(s2s_merchant, body, key="k-cashfree-1")
    assert first.status_code == again.status_code == 201
    assert first.json()["upiQrString"] == again.json()["upiQrString"] == INTENT["default"]
    assert len([e for e in on_cashfree.exchanges if e.path == "/orders/sessions"]) == 1


def test_s2s_start_cashfree_refuses_is_payment_failed_and_writes_nothing(on_cashfree, post, s2s_merchant):
    on_cashfree.prefer_for["/orders"] = "code=400"
    response = post(s2s_merchant, signed_body(s2s_merchant, amount=PRISM_ORDER_AMOUNT))
    assert (response.status_code, response.json()["errorCode"]) == (400, "PAYMENT_FAILED")
    on_cashfree.prefer_for["/orders"] = "code=500"
    response = post(s2s_merchant, signed_body(s2s_merchant, amount=PRISM_ORDER_AMOUNT))
    assert response.json()["errorCode"] == "SERVICE_UNAVAILABLE"
    assert not Payment.objects.exists()


@pytest.mark.parametrize("phone", ["+1 415 555 0100", "12345", "98765 4321"])
def test_s2s_without_a_phone_cashfree_can_take_is_a_validation_error_naming_it_before_any_call(
        on_cashfree, post, s2s_merchant, phone):
    # It was PAYMENT_FAILED ("the bank system could not start the payment"), which names nothing
    # the merchant can fix, and it used the checksum up.
    body = signed_body(s2s_merchant, amount=PRISM_ORDER_AMOUNT, customerPhone=phone)
    response = post(s2s_merchant, body)
    assert (response.status_code, response.json()["errorCode"]) == (400, "VALIDATION_ERROR")
    assert response.json()["errorMessage"].startswith("customerPhone")
    assert not on_cashfree.exchanges and not Payment.objects.exists()
    # The same payment with a number Cashfree takes (as written in India) goes on.
    fixed = post(s2s_merchant, signed_body(s2s_merchant, amount=PRISM_ORDER_AMOUNT, customerPhone="+91 98765 43210",
                                           merchantTxnId=body["merchantTxnId"]))
    assert fixed.status_code == 201, fixed.content
    order = [e for e in on_cashfree.exchanges if e.path == "/orders"][0]
    assert order.body["customer_details"]["customer_phone"] == "9876543210"


def test_the_sandbox_takes_any_phone_the_interface_allows(post, s2s_merchant):
    response = post(s2s_merchant, signed_body(s2s_merchant, customerPhone="+1 415 555 0100"))
    assert response.status_code == 201, response.content


def test_the_sandbox_still_answers_the_gateways_own_link(post, s2s_merchant):
    body = post(s2s_merchant, signed_body(s2s_merchant)).json()
    assert body["upiQrString"].startswith("upi://pay?pa=gateway@sandbox&")


def test_with_cashfree_the_cash_challan_is_offered_to_no_one(monkeypatch, acquirer, create_session, s2s_merchant):
    session = create_session(s2s_merchant)
    client = Client()
    client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    on_sandbox = client.get(f"/checkout/{session['paymentId']}").content.decode()
    assert "Print a challan" in on_sandbox
    assert "CHALLAN" in acquirer_methods()

    use_acquirer(monkeypatch, acquirer)
    on_cashfree = client.get(f"/checkout/{session['paymentId']}").content.decode()
    assert "Print a challan" not in on_cashfree and "Net banking" in on_cashfree
    assert acquirer_methods() == {"UPI", "CARD", "NB", "WALLET", "NEFT", "RTGS"}
    with pytest.raises(ValidationError, match="not offered"):
        payment_mark_processing(payment_id=Payment.objects.get(payment_id=session["paymentId"]).pk,
                                payment_mode="CHALLAN")


def test_gateway_acquirer_cashfree_loads_the_adapter_from_settings(settings):
    settings.GATEWAY_ACQUIRER = "cashfree"
    settings.CASHFREE_BASE_URL = "https://sandbox.cashfree.com/pg"
    settings.CASHFREE_CLIENT_ID, settings.CASHFREE_CLIENT_SECRET = "TEST1234567890", "cfsk_ma_test_x"
    acquirers._load.cache_clear()
    try:
        loaded = acquirers.get_acquirer()
        assert isinstance(loaded, CashfreeAcquirer) and loaded.name == "cashfree"
        assert "CHALLAN" not in acquirer_methods()
        assert "cfsk_ma_test_x" not in repr(loaded.client)
    finally:
        acquirers._load.cache_clear()
