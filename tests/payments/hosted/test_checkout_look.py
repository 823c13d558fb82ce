"""What the checkout looks like and how it is used without a mouse: screenshots at phone and
desktop size into artifacts/ (to be looked at), keyboard use, and the focus ring."""
from __future__ import annotations

import os

import pytest

from tests.payments.hosted.conftest import ARTIFACTS, DESKTOP, PHONE, submit, wait_for_return

pytestmark = pytest.mark.browser


def shoot(page, name: str) -> None:
    os.makedirs(ARTIFACTS, exist_ok=True)
    page.screenshot(path=os.path.join(ARTIFACTS, f"{name}.png"), full_page=True)


@pytest.mark.parametrize(("label", "viewport"), [("phone", PHONE), ("desktop", DESKTOP)])
def test_screenshots_of_the_checkout(checkout, start, label, viewport):
    page = checkout
    page.set_viewport_size(viewport)
    start(amount=149900)
    assert "₹1,499.00" in page.locator(".amount").inner_text()
    assert page.locator(".merchant-name").inner_text() == "Chai Point Stores"
    shoot(page, f"checkout-{label}")
    page.click("[data-method=UPI]")
    shoot(page, f"checkout-{label}-upi")
    page.click("[data-method=CARD]")
    page.fill("input[name=card_number]", "4111 1111 1111 1112")
    page.fill("input[name=card_expiry]", "12/39")
    page.fill("input[name=card_cvv]", "123")
    submit(page, "CARD")
    page.wait_for_selector("#card_number-error")  # checked before submitting (issue 19; was the server's .alert)
    shoot(page, f"checkout-{label}-card-error")
    page.fill("input[name=card_number]", "4111 1111 1111 1111")
    page.fill("input[name=card_expiry]", "12/39")
    page.fill("input[name=card_cvv]", "123")
    submit(page, "CARD")
    page.wait_for_selector("input[name=otp]")
    shoot(page, f"checkout-{label}-3ds")


def test_screenshots_of_the_challan_and_the_sandbox_bank(checkout, start):
    page = checkout
    page.set_viewport_size(DESKTOP)
    start()
    page.click("[data-method=NEFT]")
    submit(page, "NEFT")
    page.wait_for_selector("[data-reference]")
    shoot(page, "checkout-desktop-neft-challan")
    page.set_viewport_size(PHONE)
    shoot(page, "checkout-phone-neft-challan")
    start()
    page.click("[data-method=NB]")
    page.select_option("select[name=bank]", "HDFC")
    submit(page, "NB")
    page.wait_for_selector("[data-decision=approve]")
    shoot(page, "checkout-phone-sandbox-bank")
    start()
    page.click("[data-method=UPI]")
    page.click("text=I have scanned the code")
    page.wait_for_selector("img.qr-large")
    shoot(page, "checkout-phone-upi-scan")
    start()
    page.click("[data-method=UPI]")
    page.fill("input[name=vpa]", "timeout@sandbox")
    submit(page, "UPI")
    page.wait_for_selector(".spinner")
    shoot(page, "checkout-phone-upi-waiting")


def test_the_whole_payment_can_be_made_with_the_keyboard(checkout, start, merchant_site):
    page = checkout
    start()
    page.locator("[data-method=CARD]").focus()
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"  # focus ring
    page.keyboard.press("Enter")
    page.locator("input[name=card_number]").wait_for(state="visible")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "card_number"
    page.keyboard.type("4111111111111111")
    page.keyboard.press("Tab")
    page.keyboard.type("12/39")
    page.keyboard.press("Tab")
    page.keyboard.type("123")
    page.keyboard.press("Enter")
    page.wait_for_selector("input[name=otp]")
    assert page.evaluate("document.activeElement.name") == "otp"  # the challenge takes the focus
    page.keyboard.type("123456")
    page.keyboard.press("Enter")
    assert wait_for_return(page, merchant_site)["status"] == "SUCCESS"
