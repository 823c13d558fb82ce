"""Issue 33's browser test: UPI with Razorpay down goes through Cashfree on the same page, and the
console shows the route. And the degraded notice, when UPI fails on every acquirer of the route,
as a person (and axe-core) meets it, in English and Hindi.

Both acquirers are their stateful doubles over real HTTP on loopback (tests.support.two_acquirers);
our server is a live server; Chromium is the system's (tests.support.browser)."""
from __future__ import annotations

import pytest

from payments.models import AcquirerRoute, Payment
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
from tests.payments.hosted.conftest import DESKTOP, wait_for_return
from tests.payments.hosted.test_checkout_accessibility import assert_accessible
from tests.support.factories import staff_in
from tests.support.two_acquirers import both, failing  # noqa: F401 - a fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "failover-browser-pw-1"


def routed_upi(shop, acquirers: str) -> None:
    AcquirerRoute.objects.create(merchant_id=shop.merchant.pk, method="UPI", acquirers=acquirers)


def console_story(browser, live_server, payment: Payment) -> tuple[str, list[tuple[str, str]]]:
    """What a support person reads on the payment's page in the console, signed in as one: the
    story's text, and the details (term, what it says) of the step that routed the payment."""
    staff_in("support", username="support-ravi", password=PASSWORD)
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/admin/login/?next=/admin/payments/payment/{payment.pk}/change/")
        page.fill("#id_username", "support-ravi")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_selector('[data-testid="story"]')
        routed = page.locator('[data-testid="story"] tr', has_text="routed to")
        assert routed.count() == 1
        details = routed.evaluate("""(row) => [...row.querySelectorAll("dt")].map(
            (term) => [term.innerText, term.nextElementSibling.innerText])""")
        return page.inner_text('[data-testid="story"]'), [tuple(pair) for pair in details]
    finally:
        context.close()


def test_upi_with_razorpay_down_goes_through_cashfree_on_the_same_page_and_the_console_shows_the_route(
        both, checkout, start, shop, merchant_site, browser, live_server):  # noqa: F811
    cashfree, razorpay = both
    cashfree.webhook_url = f"{live_server.url}/acquirer/cashfree/webhooks"
    routed_upi(shop, "razorpay,cashfree")
    razorpay.unavailable = True  # every call answers 500: a technical failure, before any customer step
    page = checkout
    session = start(amount=25000)

    page.click("[data-method=UPI]")
    with page.expect_navigation():
        page.click("[data-action=upi-intent]")
    # No error, no second try: the waiting page, with Cashfree's link for this attempt.
    assert page.url.endswith("/status"), page.locator("main").inner_text()
    assert page.locator("[role=alert], .error, [data-attempt=failed]").count() == 0
    assert page.locator("#status-title").inner_text() == "Pay with any UPI app"
    apps = page.locator("[data-upi-app]")
    assert apps.count() >= 1 and all(apps.nth(i).get_attribute("href").startswith("upi://pay?pa=cashfree@double")
                                     for i in range(apps.count())), "the link is Cashfree's"
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert (payment.status, payment.acquirer, payment.attempt) == (Payment.Status.PROCESSING, "cashfree", 1)

    # The customer approves in their UPI app: Cashfree settles it and says so by its webhook.
    [order_id] = cashfree.orders
    cashfree.settle_payment(order_id, "SUCCESS")
    assert cashfree.deliveries[-1].status == 200
    params = wait_for_return(page, merchant_site)  # the waiting page follows it to the result, then back
    assert params["status"] == "SUCCESS"
    payment.refresh_from_db()
    assert (payment.status, payment.acquirer, payment.failed_attempts) == (Payment.Status.SUCCESS, "cashfree", 0)

    # The ledgers: Razorpay was asked and answered 500, and holds nothing; Cashfree took it once.
    assert razorpay.calls and {call.status for call in razorpay.calls} == {500}
    assert razorpay.orders == {} and razorpay.payments == {}
    assert [p["payment_status"] for p in cashfree.payments.values()] == ["SUCCESS"]
    assert [o["order_status"] for o in cashfree.orders.values()] == ["PAID"]

    story, routed = console_story(browser, live_server, payment)
    assert "routed to cashfree (failover: razorpay AcquirerUnavailable)" in story
    assert "PROCESSING → SUCCESS" in story
    # The route, as a person reads it: each acquirer tried, in order, and what became of it.
    said = dict(routed)
    assert said["route"] == "razorpay → cashfree"
    assert said["razorpay"].startswith("failed technically (AcquirerUnavailable): Razorpay find order:")
    assert "HTTP 500" in said["razorpay"]
    assert said["cashfree"] == "took it (failover: razorpay AcquirerUnavailable)"
    terms = [term for term, _ in routed]
    assert terms.index("route") < terms.index("razorpay") < terms.index("cashfree")


@pytest.mark.parametrize("language, words", [
    ("en", "UPI payments are failing more often than usual right now"),
    ("hi", "अभी UPI पेमेंट सामान्य से ज़्यादा फ़ेल हो रहे हैं"),
], ids=["en", "hi"])
def test_upi_failing_on_both_acquirers_shows_the_degraded_notice_to_a_person(
        both, checkout, start, shop, settings, language, words):  # noqa: F811
    routed_upi(shop, "razorpay,cashfree")
    failing("razorpay", "UPI")
    failing("cashfree", "UPI")
    settings.CHECKOUT_RESULT_REDIRECT_SECONDS = 60
    page = checkout
    page.set_viewport_size(DESKTOP)
    start()
    if language == "hi":  # as a customer does: the page's own switch
        page.click("[data-language=hi]")
    assert page.locator(f'html[lang="{language}"]').count() == 1
    page.click("[data-method=UPI]")

    notice = page.get_by_role("status").filter(has_text=words)
    assert notice.count() == 1 and notice.is_visible()
    assert notice.get_attribute("data-degraded") == "UPI"
    # It suggests another method, one that is not failing, which the customer can open from it.
    instead = notice.locator("[data-instead]")
    assert instead.count() == 1 and instead.get_attribute("data-instead") == "NB"
    # UPI is still payable: its button is there.
    assert page.locator("[data-action=upi-intent]").is_visible()
    assert page.locator("#method-NB[data-degraded]").count() == 0
    assert_accessible(page, f"degraded UPI ({language})")
    instead.click()
    page.locator("#method-NB[open]").wait_for()
