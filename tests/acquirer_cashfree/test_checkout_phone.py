"""The customer's mobile number on the checkout, when the acquirer requires one
(Acquirer.requires_customer_phone: Cashfree's create order takes no order without
customer_details.customer_phone) and the merchant's session came without it (`customerPhone` is
optional): every method's form asks for it, a bad one is refused before anything starts, a good
one is kept on the payment and sent to Cashfree. With the sandbox nothing is asked."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from payments.models import Payment, PaymentEvent
from payments.services.hosted import hosted_customer_phone_set, indian_mobile
from payments.state import InvalidTransition
from gateway.core.errors import ValidationError
from tests.payments.hosted.conftest import create_session  # noqa: F401 - a fixture
from tests.payments.s2s.conftest import s2s_merchant  # noqa: F401 - a fixture

from .test_acquirer import PRISM_ORDER_AMOUNT, cashfree, sent  # noqa: F401
from .test_checkout import CARD_FORM, on_cashfree, page  # noqa: F401

pytestmark = pytest.mark.django_db

S = Payment.Status
PHONE_INPUTS = re.compile(r'<input id="customer_phone-([A-Z]+)" name="customer_phone"')


def a_browser(create_session, merchant, **overrides) -> Client:
    session = create_session(merchant, amount=PRISM_ORDER_AMOUNT, **overrides)
    browser = Client()
    browser.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    browser.payment = Payment.objects.get(payment_id=session["paymentId"])
    return browser


@pytest.fixture
def customer(create_session, s2s_merchant):
    """A browser on the checkout of a fresh ₹22 session sent without customerPhone."""
    return a_browser(create_session, s2s_merchant, customerPhone=...)


def test_every_method_form_asks_for_the_mobile_number_when_the_session_has_none(on_cashfree, cashfree, customer):
    methods = customer.get(page(customer.payment)).content.decode()
    asked = set(PHONE_INPUTS.findall(methods))
    # The methods with a form (Cashfree carries no challan, and RTGS starts at Rs 2,00,000:
    # both are on the page as not available, with no form; issue 26).
    offered = set(re.findall(r'id="method-([A-Z]+)" data-available="true"', methods))
    assert {"CARD", "UPI", "NB", "WALLET"} <= offered and not offered & {"CHALLAN", "RTGS"}
    assert asked == offered  # every form on the page
    assert "Mobile number" in methods


def test_a_session_with_a_phone_is_not_asked_again(on_cashfree, cashfree, create_session, s2s_merchant):
    browser = a_browser(create_session, s2s_merchant, customerPhone="9876543210")
    assert PHONE_INPUTS.findall(browser.get(page(browser.payment)).content.decode()) == []


def test_with_the_sandbox_nothing_is_asked(create_session, s2s_merchant):
    browser = a_browser(create_session, s2s_merchant, customerPhone=...)
    assert PHONE_INPUTS.findall(browser.get(page(browser.payment)).content.decode()) == []


@pytest.mark.parametrize("typed", ["", "12345", "5876543210", "98765 4321x", "+1 415 555 0100"])
@pytest.mark.parametrize("form", [
    ("/card", CARD_FORM, "CARD"), ("/netbanking", {"bank": "HDFC"}, "NB"), ("/wallet", {"wallet": "PHONEPE"}, "WALLET"),
    ("/upi", {"vpa": "asha@okbank"}, "UPI")])
def test_a_bad_mobile_number_is_refused_by_name_and_nothing_starts(on_cashfree, cashfree, customer, form, typed):
    path, fields, code = form
    response = customer.post(page(customer.payment, path), {**fields, "customer_phone": typed})
    assert response.status_code == 200
    body = response.content.decode()
    assert f'id="customer_phone-{code}-error"' in body
    assert "10-digit" in body and "mobile number" in body
    assert cashfree.exchanges == []
    payment = customer.payment
    payment.refresh_from_db()
    assert (payment.status, payment.customer_phone) == (S.PENDING, "")


@pytest.mark.parametrize("typed", ["98765 43210", "+91 98765-43210", "098765 43210", "919876543210"])
def test_a_good_number_is_kept_and_sent_to_cashfrees_create_order(on_cashfree, cashfree, customer, typed):
    payment = customer.payment
    response = customer.post(page(payment, "/card"), {**CARD_FORM, "customer_phone": typed})
    assert response.status_code == 303 and response["Location"].startswith("https://sandbox.cashfree.com/")
    payment.refresh_from_db()
    assert (payment.status, payment.customer_phone) == (S.PROCESSING, "9876543210")
    order = sent(cashfree, "POST", "/orders")[0]
    assert order.body["customer_details"]["customer_phone"] == "9876543210"
    note = payment.events.get(kind=PaymentEvent.Kind.NOTE)
    assert note.detail == {"customer_phone": "given on the checkout", "ending": "10"}


def test_a_wallet_gets_the_number_the_customer_gave(on_cashfree, cashfree, customer):
    payment = customer.payment
    response = customer.post(page(payment, "/wallet"), {"wallet": "PHONEPE", "customer_phone": "7012345678"})
    assert response.status_code == 303
    assert sent(cashfree, "POST", "/orders")[0].body["customer_details"]["customer_phone"] == "7012345678"
    pay = sent(cashfree, "POST", "/orders/sessions")[0]
    assert pay.body["payment_method"]["app"]["phone"] == "7012345678"


def test_the_method_form_and_the_number_are_checked_together(on_cashfree, cashfree, customer):
    response = customer.post(page(customer.payment, "/netbanking"), {"bank": "", "customer_phone": "123"})
    body = response.content.decode()
    assert 'id="bank-error"' in body and 'id="customer_phone-NB-error"' in body
    assert 'value="123"' in body  # shown again beside its error
    assert cashfree.exchanges == []


def test_the_service_keeps_the_merchants_number_and_refuses_a_final_payment(on_cashfree, cashfree, customer):
    payment = customer.payment
    with pytest.raises(ValidationError) as refused:
        hosted_customer_phone_set(payment_id=payment.pk, phone="12345")
    assert refused.value.field == "customer_phone"
    hosted_customer_phone_set(payment_id=payment.pk, phone="9876543210")
    hosted_customer_phone_set(payment_id=payment.pk, phone="8888888888")  # a usable one stays
    payment.refresh_from_db()
    assert payment.customer_phone == "9876543210"
    Payment.objects.filter(pk=payment.pk).update(status=S.FAILED)
    with pytest.raises(InvalidTransition):
        hosted_customer_phone_set(payment_id=payment.pk, phone="9876543210")


def test_indian_mobile_reads_what_customers_type():
    assert indian_mobile("+91 98765 43210") == indian_mobile("(0)98765-43210") == "9876543210"
    assert indian_mobile("1234567890") == indian_mobile("98765") == indian_mobile("９８７６５４３２１０") == ""


def test_beside_the_processors_card_fields_the_number_is_asked_and_checked_before_anything(
        on_cashfree, cashfree, customer, settings):
    settings.CARD_FORM_MODE = "processor"
    methods = customer.get(page(customer.payment)).content.decode()
    assert "CARD" in PHONE_INPUTS.findall(methods) and "data-card-fields" in methods
    refused = customer.post(page(customer.payment, "/card/fields"), {"customer_phone": "12345"},
                            HTTP_ACCEPT="application/json")
    assert refused.status_code == 400 and "customer_phone" in refused.json()["errors"]
    assert cashfree.exchanges == []
    opened = customer.post(page(customer.payment, "/card/fields"), {"customer_phone": "98765 43210"},
                           HTTP_ACCEPT="application/json")
    assert opened.status_code == 200 and opened.json()["paymentSessionId"]
    [order] = sent(cashfree, "POST", "/orders")
    assert order.body["customer_details"]["customer_phone"] == "9876543210"
