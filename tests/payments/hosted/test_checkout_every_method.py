"""CONTRACT.md's seven `data-method` controls, seen in a real Chromium (tests.support.browser):
every hosted session's page carries them all, whatever its amount (issue 26). A method the
amount does not fit says why and which method can, opens no form, and a submission forced
from the page (a form made by hand in the browser) gets the page's own error."""
from __future__ import annotations

import pytest

from payments.models import Payment

pytestmark = pytest.mark.browser

SEVEN = ("UPI", "CARD", "NB", "WALLET", "NEFT", "RTGS", "CHALLAN")


@pytest.mark.parametrize(("amount", "unavailable"), [
    (49_900, {"RTGS"}),
    (25_000_000, {"UPI", "WALLET", "CHALLAN"}),
])
def test_every_session_shows_the_seven_controls_whatever_its_amount(checkout, start, amount, unavailable):
    start(amount=amount)
    for code in SEVEN:
        control = checkout.locator(f"[data-method={code}]")
        assert control.count() == 1 and control.is_visible(), code
        assert checkout.locator(f"details:has([data-method={code}])").get_attribute("data-available") == (
            "false" if code in unavailable else "true")
    for code in unavailable:
        assert "Not available for this amount" in checkout.locator(f"[data-method={code}]").inner_text()


def test_rtgs_on_a_small_order_says_why_names_neft_and_cannot_be_submitted(checkout, start):
    start(amount=49_900)
    checkout.click("[data-method=RTGS]")
    body = checkout.locator("[data-unavailable=RTGS]")
    assert body.is_visible()
    assert "RTGS is for ₹2,00,000.00 and above, and this payment is ₹499.00." in body.inner_text()
    assert body.locator("form, button, input").count() == 0
    checkout.click("[data-instead=NEFT]")  # a plain link: the page again with NEFT open
    neft = checkout.locator("details:has([data-method=NEFT])")
    neft.locator("button[type=submit]").wait_for()
    assert neft.get_attribute("open") is not None


def test_rtgs_reads_in_hindi(checkout, start):
    start(amount=49_900, language="hi")
    assert "इस रकम के लिए उपलब्ध नहीं" in checkout.locator("[data-method=RTGS]").inner_text()
    checkout.click("[data-method=RTGS]")
    assert "इसके बजाय NEFT से पे करें" in checkout.locator("[data-unavailable=RTGS]").inner_text()


def test_a_forced_rtgs_submission_from_the_page_gets_its_error_and_changes_nothing(checkout, start):
    session = start(amount=49_900)
    # What a hand-made request does: the NEFT form, its mode changed to RTGS, submitted.
    checkout.click("[data-method=NEFT]")
    checkout.eval_on_selector("details:has([data-method=NEFT]) input[name=mode]", "input => input.value = 'RTGS'")
    with checkout.expect_navigation() as navigation:
        checkout.locator("details:has([data-method=NEFT]) button[type=submit]").click()
    assert navigation.value.status == 400
    assert "RTGS is for ₹2,00,000.00 and above" in checkout.locator("#form-errors").inner_text()
    assert checkout.locator("[data-method]").count() == 7
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert (payment.status, payment.payment_mode, payment.attempt, payment.events.count()) == ("PENDING", "", 0, 1)
