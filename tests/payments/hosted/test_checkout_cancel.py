"""Cancelling asks once (issue 26, section 4: one tap on "cancel" used to end the payment). The
question is a page of its own, so it works without JavaScript; only its "Yes" ends the payment."""
from __future__ import annotations

import re

import pytest

from payments.models import Payment
from tests.payments.hosted.conftest import open_checkout, wait_for_return

pytestmark = pytest.mark.django_db


def opened(client, create_session, shop, **overrides) -> str:
    session = create_session(shop, **overrides)
    client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    return session["paymentId"]


def test_the_cancel_control_asks_rather_than_ends_the_payment(client, create_session, shop):
    pid = opened(client, create_session, shop)
    methods = client.get(f"/checkout/{pid}").content.decode()
    control = re.search(r'<(\w+)[^>]*data-action="cancel"[^>]*>', methods)
    assert control.group(1) == "a" and f'href="/checkout/{pid}/cancel"' in control.group(0)  # a link, not a submit
    question = client.get(f"/checkout/{pid}/cancel")
    html = question.content.decode()
    assert question.status_code == 200 and "Cancel this payment?" in html and "₹1,499.00" in html
    assert re.search(rf'<form method="post" action="/checkout/{pid}/cancel">.*data-action="cancel-confirm"', html, re.S)
    assert f'href="/checkout/{pid}" data-action="cancel-keep"' in html
    payment = Payment.objects.get(payment_id=pid)
    assert (payment.status, payment.events.count()) == ("PENDING", 1)  # asking wrote nothing
    # The answer ends it.
    assert client.post(f"/checkout/{pid}/cancel")["Location"] == f"/checkout/{pid}/result"
    payment.refresh_from_db()
    assert (payment.status, payment.failure_reason) == ("FAILED", "cancelled by the customer")


def test_the_question_reads_in_hindi(client, create_session, shop):
    pid = opened(client, create_session, shop, language="hi")
    html = client.get(f"/checkout/{pid}/cancel").content.decode()
    assert "यह पेमेंट रद्द करें?" in html and "हाँ, पेमेंट रद्द करें" in html and "नहीं, पेमेंट जारी रखें" in html


def test_the_question_of_a_finished_payment_shows_where_it_is(client, create_session, shop):
    pid = opened(client, create_session, shop)
    client.post(f"/checkout/{pid}/cancel")
    response = client.get(f"/checkout/{pid}/cancel")
    assert response.status_code == 303 and response["Location"] == f"/checkout/{pid}/result"


@pytest.mark.browser
@pytest.mark.parametrize("javascript", [False, True], ids=["no-js", "js"])
def test_a_customer_is_asked_once_with_or_without_javascript(browser, live_server, settings, create_session, shop,
                                                           merchant_site, javascript):
    settings.GATEWAY_PUBLIC_URL = live_server.url
    settings.CHECKOUT_RESULT_REDIRECT_SECONDS = 1
    context = browser.new_context(java_script_enabled=javascript)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        session = create_session(shop, returnUrl=merchant_site.url("/shop/return"))
        open_checkout(page, session)
        page.click("[data-action=cancel]")  # one tap: the question, nothing ended
        page.locator("[data-cancel-question]").wait_for()
        assert Payment.objects.get(payment_id=session["paymentId"]).status == "PENDING"
        page.click("[data-action=cancel-keep]")  # "No": back to the methods, still open
        page.locator("[data-method=UPI]").wait_for()
        assert Payment.objects.get(payment_id=session["paymentId"]).status == "PENDING"
        page.click("[data-action=cancel]")
        page.click("[data-action=cancel-confirm]")  # "Yes": ended, and back to the merchant
        assert "Payment cancelled" in page.locator("[data-payment-status=FAILED]").inner_text()
        assert wait_for_return(page, merchant_site)["status"] == "FAILED"
    finally:
        context.close()
