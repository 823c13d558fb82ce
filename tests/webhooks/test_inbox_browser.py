"""The webhook inbox in a real Chromium (issue 26, section 4): styled within the page's own
Content-Security-Policy, each delivery's headers and body folded, and the list paged, so that
the 24 deliveries of a payment's day read like a list and not like a 35,950-pixel wall."""
from __future__ import annotations

import pytest

from tests.support.browser import PolicyViolations, shared_chromium
from tests.support.factories import make_merchant, make_payment
from webhooks.inbox import merchant_point_to_inbox
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run
from webhooks.views import PAGE_SIZE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LAPTOP = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def chromium():
    with shared_chromium() as browser:
        yield browser


@pytest.fixture
def inbox_with_24_deliveries(live_server, settings):
    """The quick start's situation: a merchant pointed at its inbox, whose 24 payments' webhooks
    the gateway's own delivery code has posted there over loopback HTTP."""
    settings.GATEWAY_PUBLIC_URL = live_server.url
    shop = make_merchant(code="DEMO", name="Demo Store")
    address = merchant_point_to_inbox(merchant=shop.merchant, actor="test")
    for _ in range(24):
        make_payment(shop, status="SUCCESS")
    for delivery in WebhookDelivery.objects.filter(merchant=shop.merchant):
        assert delivery_attempt_run(delivery.pk).status == WebhookDelivery.Status.DELIVERED
    return address


def test_the_inbox_is_styled_within_its_policy_folded_and_paged(chromium, inbox_with_24_deliveries):
    context = chromium.new_context(viewport=LAPTOP)
    violations = PolicyViolations(context)
    page = context.new_page()
    response = page.goto(inbox_with_24_deliveries)
    assert "style-src 'self'" in response.headers["content-security-policy"]
    violations.assert_none(page, "the webhook inbox")

    # Styled: the stylesheet applied (a verified delivery's green rule), not blocked.
    article = page.locator("article").first
    assert article.evaluate("a => getComputedStyle(a).borderLeftColor") == "rgb(26, 127, 55)"
    # Folded and paged: ten closed deliveries, newest first, the page a few screens at most
    # (it was 34,000 pixels and more with every body open and nothing styled).
    assert page.locator("article").count() == PAGE_SIZE
    assert page.locator("details[open]").count() == 0 and not page.locator("article pre").first.is_visible()
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 2 * LAPTOP["height"], height
    assert "Deliveries 1 to 10 of 24" in page.locator(".pager").first.inner_text()

    # A body opens where it is, and the page stops reloading itself while it is open.
    page.locator("article summary").first.click()
    assert '"event": "payment.success"' in page.locator("article pre").first.inner_text()
    # The older pages hold the rest, each delivery once.
    seen = page.locator("article").evaluate_all("all => all.map(a => a.dataset.eventId)")
    page.locator(".pager a[rel=next]").first.click()
    seen += page.locator("article").evaluate_all("all => all.map(a => a.dataset.eventId)")
    page.locator(".pager a[rel=next]").first.click()
    assert "Deliveries 21 to 24 of 24" in page.locator(".pager").first.inner_text()
    seen += page.locator("article").evaluate_all("all => all.map(a => a.dataset.eventId)")
    assert len(seen) == len(set(seen)) == 24
    assert page.locator(".pager a[rel=next]").count() == 0
    violations.assert_none(page, "the webhook inbox's older pages")
    context.close()


def test_the_inbox_on_a_phone_has_no_sideways_scroll(chromium, inbox_with_24_deliveries):
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    violations = PolicyViolations(context)
    page = context.new_page()
    page.goto(inbox_with_24_deliveries)
    page.locator("article summary").first.click()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    violations.assert_none(page, "the webhook inbox on a phone")
    context.close()
