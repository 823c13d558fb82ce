"""Forms that forgive (issue 19): the card number spaced and its network named as typed, the
expiry's slash inserted and every usual way of writing it accepted (by the server too), errors
shown before submitting without clearing what was right, and everything without JavaScript."""
from __future__ import annotations

from datetime import date

import pytest

from payments.cards import parse_expiry
from payments.models import Payment
from tests.payments.hosted.conftest import PHONE, open_checkout, submit, wait_for_return

YEAR = date.today().year + 3
YY = f"{YEAR % 100:02d}"


@pytest.mark.parametrize("typed", [f"12/{YY}", f"12 / {YEAR}", f"12{YY}", f"12{YEAR}", f"12-{YY}", f" 12/{YY} "])
def test_the_expiry_is_read_however_it_is_typed(typed):
    assert parse_expiry(typed) == (12, YEAR)


@pytest.mark.parametrize("typed", ["13/29", "12/2", "1", "12/29/1", "ab/cd", ""])
def test_an_expiry_that_is_not_one_is_refused(typed):
    with pytest.raises(ValueError):
        parse_expiry(typed)


@pytest.mark.django_db
def test_the_server_takes_an_expiry_without_its_slash(client, create_session, shop):
    session = create_session(shop)
    client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    response = client.post(f"/checkout/{session['paymentId']}/card",
                           {"card_number": "4111 1111 1111 1111", "card_expiry": f"12{YY}", "card_cvv": "123"})
    assert response.status_code == 303
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "PROCESSING"



@pytest.mark.browser
def test_the_card_form_formats_as_typed_and_checks_before_submitting(checkout, start):
    session = start()
    checkout.click("[data-method=CARD]")
    number = checkout.locator("input[name=card_number]")
    number.press_sequentially("4111111111111111")
    assert number.input_value() == "4111 1111 1111 1111"
    assert checkout.locator("[data-card-network]").inner_text() == "Visa"
    expiry = checkout.locator("input[name=card_expiry]")
    expiry.press_sequentially(f"12{YY}")
    assert expiry.input_value() == f"12/{YY}"
    expiry.fill("")
    expiry.press_sequentially(f"12/{YY}")  # the slash typed after the one inserted is not doubled
    assert expiry.input_value() == f"12/{YY}"
    assert expiry.get_attribute("inputmode") == "numeric" and number.get_attribute("inputmode") == "numeric"

    number.fill("4111 1111 1111 1112")  # a typo: the Luhn check fails
    checkout.locator("input[name=card_cvv]").fill("12")
    submit(checkout, "CARD")  # refused before it leaves the page
    assert "not valid" in checkout.locator("#card_number-error").inner_text()
    assert "3 digits" in checkout.locator("#card_cvv-error").inner_text()
    assert number.get_attribute("aria-invalid") == "true"
    assert expiry.input_value() == f"12/{YY}"  # what was right stays
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "PENDING"

    number.fill("4111 1111 1111 1111")
    checkout.locator("input[name=card_cvv]").fill("123")
    submit(checkout, "CARD")
    checkout.locator("input[name=otp]").wait_for()
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "PROCESSING"


@pytest.mark.browser
def test_a_card_payment_works_without_javascript(browser, live_server, settings, create_session, shop,
                                                 merchant_site):
    settings.GATEWAY_PUBLIC_URL = live_server.url
    settings.CHECKOUT_RESULT_REDIRECT_SECONDS = 1
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        session = create_session(shop, returnUrl=merchant_site.url("/shop/return"))
        open_checkout(page, session)
        page.click("[data-method=CARD]")
        page.fill("input[name=card_number]", "4111111111111111")
        page.fill("input[name=card_expiry]", f"12{YY}")
        page.fill("input[name=card_cvv]", "123")
        submit(page, "CARD")
        page.fill("input[name=otp]", "123456")
        page.locator("form:has(input[name=otp]) button[type=submit]").click()
        assert wait_for_return(page, merchant_site)["status"] == "SUCCESS"
    finally:
        context.close()
