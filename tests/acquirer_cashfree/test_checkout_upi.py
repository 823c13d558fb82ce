"""Hosted UPI with Cashfree (issue 28): the method leads with Cashfree's own intent link for the
attempt, a QR of it on a wide screen and app buttons on a phone, and the waiting page follows it
to the end; Collect (a typed UPI ID) only where the merchant's setting allows it, off by default
in production. Cashfree is Prism serving its own description, the order pay answer scripted
(ScriptedPrism, tests/acquirer_cashfree/test_acquirer.py)."""
from __future__ import annotations

import subprocess
from html import escape

import pytest
from django.test import Client

from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
from payments.models import Payment, PaymentEvent
from payments.services.upi import upi_unanswered_reconcile
from tests.payments.hosted.conftest import browser, create_session, open_checkout  # noqa: F401 - fixtures
from tests.payments.hosted.conftest import DESKTOP, PHONE
from tests.payments.hosted.doubles import use_acquirer
from tests.payments.s2s.conftest import s2s_merchant  # noqa: F401 - a fixture

from .test_acquirer import INTENT, PRISM_ORDER_AMOUNT, cashfree, payments_list, sent  # noqa: F401
from .test_acquirer_gateway import INTENT_ANSWER

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status


@pytest.fixture
def on_cashfree(settings, monkeypatch, cashfree):
    settings.GATEWAY_ACQUIRER = "cashfree"
    cashfree.script[("POST", "/orders/sessions")] = INTENT_ANSWER
    use_acquirer(monkeypatch, CashfreeAcquirer(cashfree))
    return cashfree


@pytest.fixture
def production(settings):
    settings.GATEWAY_ENV = "production"
    settings.IS_PRODUCTION = True


@pytest.fixture
def customer(create_session, s2s_merchant):
    session = create_session(s2s_merchant, amount=PRISM_ORDER_AMOUNT, customerPhone="9876543210")
    browser = Client()
    browser.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    browser.payment = Payment.objects.get(payment_id=session["paymentId"])
    return browser


def page(payment: Payment, tail: str = "") -> str:
    return f"/checkout/{payment.payment_id}{tail}"


def test_in_production_upi_leads_with_the_app_and_offers_no_collect(on_cashfree, production, customer):
    methods = customer.get(page(customer.payment)).content.decode()
    assert 'data-action="upi-intent"' in methods
    assert 'name="vpa"' not in methods  # Collect is off by default in production
    assert on_cashfree.exchanges == []  # showing the page asks Cashfree nothing


def test_a_forged_collect_is_refused_without_a_call(on_cashfree, production, customer):
    response = customer.post(page(customer.payment, "/upi"), {"vpa": "asha@okbank"})
    assert response.status_code == 400
    assert "UPI ID is not available" in response.content.decode()
    assert on_cashfree.exchanges == []
    customer.payment.refresh_from_db()
    assert customer.payment.status == S.PENDING


def test_the_merchants_setting_turns_collect_on_in_production(on_cashfree, production, customer):
    customer.payment.merchant.__class__.objects.filter(pk=customer.payment.merchant_id).update(upi_collect=True)
    assert 'name="vpa"' in customer.get(page(customer.payment)).content.decode()


def test_paying_by_app_gets_cashfrees_link_once_and_the_waiting_page_shows_it(on_cashfree, production, customer):
    payment = customer.payment
    response = customer.post(page(payment, "/upi/intent"))
    assert response.status_code in (302, 303)
    payment.refresh_from_db()
    assert (payment.status, payment.payment_mode, payment.payer_vpa, payment.attempt) == (S.PROCESSING, "UPI", "", 1)
    [pay] = sent(on_cashfree, "POST", "/orders/sessions")
    assert pay.body["payment_method"]["upi"]["channel"] == "link"
    status = customer.get(page(payment, "/status")).content.decode()
    assert "data-upi-qr" in status
    assert f'href="{escape(INTENT["gpay"])}" data-upi-app="gpay"' in status
    assert f'href="{escape(INTENT["default"])}" data-upi-app="any"' in status
    customer.get(page(payment, "/status"))  # the page polls: no second order pay
    assert len(sent(on_cashfree, "POST", "/orders/sessions")) == 1


def test_a_lost_webhook_of_an_app_payment_is_found_by_the_status_query(on_cashfree, production, customer):
    from datetime import timedelta

    from django.utils import timezone

    payment = customer.payment
    customer.post(page(payment, "/upi/intent"))
    on_cashfree.script[("GET", f"/orders/{payment.sabpaisa_txn_id}/payments")] = (
        200, payments_list(("91235", "SUCCESS", "upi", "612345678901")))
    assert upi_unanswered_reconcile(now=timezone.now() + timedelta(minutes=2)) == 1
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "612345678901")


def test_pay_another_way_leaves_the_app_payment_and_offers_the_methods(on_cashfree, production, customer):
    payment = customer.payment
    customer.post(page(payment, "/upi/intent"))
    customer.post(page(payment, "/upi/change"))
    payment.refresh_from_db()
    assert (payment.status, payment.failed_attempts) == (S.PENDING, 0)
    assert PaymentEvent.objects.filter(payment=payment, detail__step="upi_intent", detail__attempt=1).exists()


# -- the browser: the QR on a wide screen, the apps on a phone ----------------------------------------

@pytest.fixture
def paying_by_app(browser, live_server, settings, on_cashfree, production, create_session, s2s_merchant):  # noqa: F811
    settings.GATEWAY_PUBLIC_URL = live_server.url
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    tab = context.new_page()
    session = create_session(s2s_merchant, amount=PRISM_ORDER_AMOUNT, customerPhone="9876543210")
    open_checkout(tab, session)
    tab.click("[data-method=UPI]")
    tab.click("[data-action=upi-intent]")
    tab.wait_for_url("**/status")
    yield tab
    context.close()


def test_on_a_wide_screen_the_waiting_page_shows_the_qr_of_cashfrees_link(paying_by_app, tmp_path):
    qr = paying_by_app.locator("img[data-upi-qr]")
    assert qr.is_visible()
    assert not paying_by_app.locator("[data-upi-app]").first.is_visible()
    image = tmp_path / "qr.png"
    qr.screenshot(path=str(image))
    decoded = subprocess.run(["zbarimg", "--quiet", "--raw", str(image)], capture_output=True, text=True,
                             check=True).stdout.strip()
    assert decoded == INTENT["default"]


def test_on_a_phone_the_waiting_page_shows_the_upi_apps(paying_by_app):
    paying_by_app.set_viewport_size(PHONE)
    assert not paying_by_app.locator("img[data-upi-qr]").is_visible()
    apps = paying_by_app.locator("[data-upi-app]")
    assert [apps.nth(i).get_attribute("data-upi-app") for i in range(apps.count())] == ["gpay", "any"]
    assert apps.first.is_visible() and apps.first.get_attribute("href") == INTENT["gpay"]
    assert paying_by_app.locator("[data-action=change-method]").first.is_visible()
