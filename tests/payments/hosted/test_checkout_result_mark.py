"""The result page's mark reads as the outcome at a glance (issue 26, section 4: the success
mark was a small unstyled "✓"): a large green disc with a white tick for a paid payment, a red
one with "!" for a failed one, drawn as SVG and styled by the checkout's stylesheet within the
page's Content-Security-Policy (no inline style), seen in a real Chromium."""
from __future__ import annotations

import os

import pytest

from tests.payments.hosted.conftest import ARTIFACTS, submit
from tests.support.browser import PolicyViolations

pytestmark = pytest.mark.browser

GREEN = "rgb(22, 101, 52)"  # --ok
RED = "rgb(185, 28, 28)"  # --danger


@pytest.fixture
def watched(checkout):
    violations = PolicyViolations(checkout.context)
    return checkout, violations


def mark_of(page) -> dict:
    """What the browser draws for the mark: its size, and the colour of its disc."""
    mark = page.locator(".result-mark")
    mark.evaluate("m => Promise.all(m.getAnimations().map(a => a.finished))")  # as it rests
    box = mark.bounding_box()
    disc = mark.locator("svg circle").first
    return {"width": box["width"], "height": box["height"],
            "disc": disc.evaluate("c => getComputedStyle(c).fill") if disc.count() else None,
            "tick": mark.locator("svg path").count()}


def test_a_paid_payment_shows_a_large_green_tick_within_the_policy(watched, start):
    page, violations = watched
    start(amount=149900)
    page.click("[data-method=CARD]")
    page.fill("input[name=card_number]", "4111 1111 1111 1111")
    page.fill("input[name=card_expiry]", "12/39")
    page.fill("input[name=card_cvv]", "123")
    submit(page, "CARD")
    page.fill("input[name=otp]", "123456")
    page.locator("form:has(input[name=otp]) button[type=submit]").click()
    page.locator("[data-payment-status=SUCCESS]").wait_for()
    mark = mark_of(page)
    print("paid mark:", mark)
    assert 64 <= mark["width"] <= 120 and 64 <= mark["height"] <= 120, mark  # was a line of text
    assert mark["disc"] == GREEN and mark["tick"] == 1, mark
    assert page.locator(".result-mark").get_attribute("aria-hidden") == "true"  # the heading says it
    assert page.locator("#result-title").evaluate("h => getComputedStyle(h).color") == GREEN
    assert "{#" not in page.locator("[data-payment-status]").inner_text()  # no template comment shows
    violations.assert_none(page, "result: paid")
    os.makedirs(ARTIFACTS, exist_ok=True)
    page.screenshot(path=os.path.join(ARTIFACTS, "result-paid.png"))  # to be looked at


def test_a_cancelled_payment_does_not_look_like_success(watched, start):
    page, violations = watched
    start()
    page.click("[data-action=cancel]")
    page.click("[data-action=cancel-confirm]")
    page.locator("[data-payment-status=FAILED]").wait_for()
    mark = mark_of(page)
    assert 64 <= mark["width"] <= 120 and mark["disc"] not in (None, GREEN), mark
    violations.assert_none(page, "result: cancelled")
    page.screenshot(path=os.path.join(ARTIFACTS, "result-cancelled.png"))
