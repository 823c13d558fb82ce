"""The phone-size screenshots in docs/screenshots/ (docs/hosted-checkout.md): the Hindi pages and
a failed-then-retried payment. Skipped unless UPDATE_DOC_SCREENSHOTS=1, so that an ordinary run
never rewrites files under docs/."""
from __future__ import annotations

import os

import pytest

from tests.payments.hosted.conftest import submit

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(os.environ.get("UPDATE_DOC_SCREENSHOTS") != "1",
                                 reason="writes docs/screenshots/; set UPDATE_DOC_SCREENSHOTS=1")]

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "screenshots")


def shoot(page, name: str) -> None:
    os.makedirs(DOCS, exist_ok=True)
    page.screenshot(path=os.path.join(DOCS, f"{name}.png"), full_page=True)


def card(page, number: str) -> None:
    if not page.locator("details:has([data-method=CARD])[open]").count():
        page.click("[data-method=CARD]")
    page.fill("input[name=card_number]", number)
    page.fill("input[name=card_expiry]", "12/39")
    page.fill("input[name=card_cvv]", "123")
    submit(page, "CARD")


def test_hindi_pages_and_a_failed_then_retried_payment(checkout, start, settings):
    settings.CHECKOUT_RESULT_REDIRECT_SECONDS = 60  # time to take the picture
    page = checkout
    start(language="hi", amount=10000000)
    shoot(page, "hi-1-methods")
    page.click("[data-method=UPI]")
    shoot(page, "hi-2-upi")
    card(page, "4000 0000 0000 0002")  # declined by the issuer
    page.locator("[data-attempt=failed]").wait_for()
    shoot(page, "hi-3-failed-attempt")
    card(page, "4111 1111 1111 1111")
    page.locator("input[name=otp]").wait_for()
    shoot(page, "hi-4-otp")
    page.fill("input[name=otp]", "123456")
    page.locator("form:has(input[name=otp]) button[type=submit]").click()
    page.locator("[data-payment-status=SUCCESS]").wait_for()
    shoot(page, "hi-5-result-paid")

    start(language="hi")
    page.click("[data-method=UPI]")
    page.fill("input[name=vpa]", "timeout@sandbox")
    submit(page, "UPI")
    page.locator("button[data-action=change-method]").wait_for()
    shoot(page, "hi-6-upi-waiting")
    start(language="hi")
    page.click("[data-method=NEFT]")
    submit(page, "NEFT")
    page.locator("[data-reference]").wait_for()
    shoot(page, "hi-7-neft-details")
    start(language="hi")
    page.click("[data-method=WALLET]")
    page.select_option("select[name=wallet]", "PAYTM")
    submit(page, "WALLET")
    page.locator("[data-decision=approve]").wait_for()
    shoot(page, "hi-8-wallet")

    start(language="en")
    card(page, "4000 0000 0000 0002")
    page.locator("[data-attempt=failed]").wait_for()
    shoot(page, "en-retry-1-declined")
    card(page, "5555 5555 5555 4444")
    page.fill("input[name=otp]", "123456")
    page.locator("form:has(input[name=otp]) button[type=submit]").click()
    page.locator("[data-payment-status=SUCCESS]").wait_for()
    shoot(page, "en-retry-2-paid")
