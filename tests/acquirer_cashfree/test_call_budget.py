"""The checkout's budget of acquirer calls per session and per attempt (issue 28,
payments.services.call_budget), counted where the calls arrive: Cashfree is Prism serving its
own description, and `cashfree.exchanges` is every request that reached it. Past the budget the
customer sees the calm page and Cashfree sees nothing more; page views reuse the answer kept
for the attempt."""
from __future__ import annotations

import pytest
from django.core.cache import cache

from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
from payments.models import Payment, PaymentEvent
from payments.services.call_budget import _answer_key
from payments.services.hosted.banks import TRANSFER_ACCOUNT
from payments.services.hosted.pages import RETURN_ASKED
from tests.payments.hosted.conftest import DESKTOP, browser, create_session, open_checkout  # noqa: F401 - fixtures
from tests.payments.hosted.doubles import use_acquirer
from tests.payments.s2s.conftest import s2s_merchant  # noqa: F401 - a fixture

from .test_acquirer import PRISM_ORDER_AMOUNT, TRANSFER_ANSWER, cashfree, payments_list, sent  # noqa: F401
from .test_acquirer_gateway import INTENT_ANSWER
from .test_checkout_upi import customer, page  # noqa: F401 - a fixture, and the pages' addresses

S = Payment.Status


@pytest.fixture
def on_cashfree(settings, monkeypatch, cashfree):
    settings.GATEWAY_ACQUIRER = "cashfree"
    settings.GATEWAY_PUBLIC_URL = "https://pay.example.com"
    settings.CHECKOUT_ACQUIRER_CALLS_PER_SESSION = 4
    settings.CHECKOUT_ACQUIRER_CALLS_PER_ATTEMPT = 3
    cashfree.script[("POST", "/orders/sessions")] = INTENT_ANSWER
    use_acquirer(monkeypatch, CashfreeAcquirer(cashfree))
    return cashfree


def forget_kept_answers(payment: Payment):
    """As if CHECKOUT_ACQUIRER_ANSWER_SECONDS had passed: the answers kept about the payment's
    attempt lapse (the budget's counters stay)."""
    payment.refresh_from_db()
    cache.delete_many([_answer_key(payment, question) for question in (TRANSFER_ACCOUNT, RETURN_ASKED)])


def calm(response, scope: str) -> bool:
    body = response.content.decode()
    return response.status_code == 429 and f'data-calm="{scope}"' in body and int(response["Retry-After"]) >= 1


@pytest.mark.django_db(transaction=True)
def test_looping_pay_by_app_and_change_method_stops_at_the_session_budget(on_cashfree, customer):
    payment = customer.payment
    for _ in range(4):
        assert customer.post(page(payment, "/upi/intent")).status_code in (302, 303)
        assert customer.post(page(payment, "/upi/change")).status_code in (302, 303)
    pays = len(sent(on_cashfree, "POST", "/orders/sessions"))
    assert pays == 4
    before = len(on_cashfree.exchanges)
    refused = customer.post(page(payment, "/upi/intent"))
    assert calm(refused, "session")
    assert "Please wait a moment" in refused.content.decode()
    assert len(on_cashfree.exchanges) == before  # no call past the budget
    payment.refresh_from_db()
    assert payment.status == S.PENDING  # nothing half-written: the attempt was never started
    # Another method is refused the same way: the budget is the session's.
    assert calm(customer.post(page(payment, "/netbanking"), {"bank": "HDFC"}), "session")
    assert len(on_cashfree.exchanges) == before


@pytest.mark.django_db(transaction=True)
def test_collect_requests_to_typed_upi_ids_stop_at_the_budget(on_cashfree, customer):
    payment = customer.payment
    payment.merchant.__class__.objects.filter(pk=payment.merchant_id).update(upi_collect=True)
    on_cashfree.script[("GET", f"/orders/{payment.sabpaisa_txn_id}/payments")] = (
        200, payments_list(("91235", "PENDING", "upi", "")))
    sent_to = []
    for n in range(10):
        vpa = f"stranger{n}@okbank"
        response = customer.post(page(payment, "/upi"), {"vpa": vpa})
        if calm(response, "session"):
            break
        sent_to.append(vpa)
        customer.post(page(payment, "/upi/change"))  # leaves the request: asks its status once
    collects = [e.body["payment_method"]["upi"]["upi_id"] for e in sent(on_cashfree, "POST", "/orders/sessions")]
    assert collects == sent_to and len(collects) < 10
    # Four calls in all: two collect requests, each left with one status query.
    assert len(collects) == 2


@pytest.mark.django_db(transaction=True)
def test_the_challan_is_shown_from_the_kept_answer_and_stops_at_the_attempts_budget(on_cashfree, customer):
    on_cashfree.script[("POST", "/orders/sessions")] = TRANSFER_ANSWER
    payment = customer.payment
    assert customer.post(page(payment, "/transfer/start"), {"mode": "NEFT"})["Location"] == page(payment, "/transfer")
    started = len(on_cashfree.exchanges)  # the order and the account
    for _ in range(5):
        assert b"026291800001191" in customer.get(page(payment, "/transfer")).content
    assert len(on_cashfree.exchanges) == started  # page views ask nothing while the answer is kept
    # The start was the attempt's first call; two more views after the answer lapsed are its
    # second and third; the fourth is past the attempt's budget of 3.
    for _ in range(2):
        forget_kept_answers(payment)
        assert b"026291800001191" in customer.get(page(payment, "/transfer")).content
    asked = len(on_cashfree.exchanges)
    assert asked == started + 2 * 2  # each asks for the order and the account again
    forget_kept_answers(payment)
    refused = customer.get(page(payment, "/transfer"))
    assert calm(refused, "attempt")
    assert len(on_cashfree.exchanges) == asked


@pytest.mark.django_db(transaction=True)
def test_reloading_the_return_asks_once_and_writes_one_event(on_cashfree, customer, settings):
    settings.CHECKOUT_ACQUIRER_CALLS_PER_ATTEMPT = 20
    settings.CHECKOUT_ACQUIRER_CALLS_PER_SESSION = 20
    payment = customer.payment
    on_cashfree.script.pop(("POST", "/orders/sessions"))  # Prism's example: a link to the bank's page
    assert customer.post(page(payment, "/netbanking"), {"bank": "HDFC"}).status_code == 303
    # Cashfree has no payment of the order yet (the customer came back before the bank's page).
    on_cashfree.script[("GET", f"/orders/{payment.sabpaisa_txn_id}/payments")] = (200, [])
    status_path = f"/orders/{payment.sabpaisa_txn_id}/payments"
    for _ in range(6):
        assert customer.get(page(payment, "/back"))["Location"] == page(payment, "/status")
    assert len(sent(on_cashfree, "GET", status_path)) == 1
    notes = PaymentEvent.objects.filter(payment=payment, detail__step="bank_authorize_return")
    assert notes.count() == 1
    forget_kept_answers(payment)  # a minute or two later: asked again, and the story has nothing new
    customer.get(page(payment, "/back"))
    assert len(sent(on_cashfree, "GET", status_path)) == 2
    assert notes.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_returns_are_counted_against_the_attempt(on_cashfree, customer):
    payment = customer.payment
    on_cashfree.script.pop(("POST", "/orders/sessions"))
    customer.post(page(payment, "/netbanking"), {"bank": "HDFC"})  # the attempt's first call
    on_cashfree.script[("GET", f"/orders/{payment.sabpaisa_txn_id}/payments")] = (200, [])
    for _ in range(2):
        forget_kept_answers(payment)
        customer.get(page(payment, "/back"))
    asked = len(on_cashfree.exchanges)
    forget_kept_answers(payment)
    refused = customer.get(page(payment, "/back"))
    assert calm(refused, "attempt") and len(on_cashfree.exchanges) == asked


# -- the browser: looping "pay by UPI" and "change method" ------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_in_the_browser_looping_upi_and_change_method_ends_on_the_calm_page(
        browser, live_server, settings, on_cashfree, create_session, s2s_merchant):  # noqa: F811
    settings.GATEWAY_ENV = "production"
    settings.IS_PRODUCTION = True
    settings.GATEWAY_PUBLIC_URL = live_server.url
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    settings.CHECKOUT_ACQUIRER_CALLS_PER_SESSION = 3
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    tab = context.new_page()
    try:
        session = create_session(s2s_merchant, amount=PRISM_ORDER_AMOUNT, customerPhone="9876543210")
        open_checkout(tab, session)
        for _ in range(3):
            tab.click("[data-method=UPI]")
            tab.click("[data-action=upi-intent]")
            tab.wait_for_url("**/status")
            tab.click("button[data-action=change-method]")
            tab.wait_for_url(f"**/checkout/{session['paymentId']}")
        before = len(on_cashfree.exchanges)
        tab.click("[data-method=UPI]")
        tab.click("[data-action=upi-intent]")
        calm_page = tab.locator("[data-calm=session]")
        calm_page.wait_for()
        assert tab.locator("h1").inner_text() == "Please wait a moment"
        assert len(on_cashfree.exchanges) == before
        tab.click("[data-action=calm-check]")  # back to the methods, calmly
        tab.locator("[data-method=UPI]").wait_for()
    finally:
        context.close()
