"""No page the gateway serves breaks its own Content-Security-Policy (issue 26, section 4), in a
real Chromium that reports every violation (tests.support.browser.PolicyViolations: the
`securitypolicyviolation` events and the console's errors), on top of the axe checks of the
checkout: every state of the checkout in both languages and with a merchant's brand (its one
nonce'd style), the result and error pages, the sandbox's bank, transfer and UPI pages, the
webhook inbox, the API docs, and the console signed in, every page reachable from its front
page by links."""
from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import Error as PlaywrightError

from payments.services.links import LinkRequest, link_url, payment_link_create
from tests.payments.hosted.test_brand_checkout import a_logo, set_brand
from tests.support.browser import PolicyViolations, shared_chromium
from tests.support.factories import make_merchant, make_payment, session_body, staff_in, story_payment
from tests.support.receiver import Receiver, Reply
from webhooks.inbox import merchant_point_to_inbox
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}
PASSWORD = "policy-everywhere-pw-1"


@pytest.fixture(scope="module")
def chromium():
    with shared_chromium() as browser:
        yield browser


@pytest.fixture
def site(live_server, settings):
    settings.GATEWAY_PUBLIC_URL = live_server.url
    settings.CHECKOUT_RESULT_REDIRECT_SECONDS = 60  # stay on the result page while it is checked
    return live_server.url


@pytest.fixture
def watched(chromium, site):
    """watched(viewport) -> (page, violations) in a fresh context, closed at the end."""
    contexts = []

    def _open(viewport=PHONE):
        context = chromium.new_context(viewport=viewport)
        context.set_default_timeout(20_000)
        contexts.append(context)
        violations = PolicyViolations(context)
        return context.new_page(), violations

    yield _open
    for context in contexts:
        context.close()


@pytest.fixture
def merchant_site():
    thanks = Reply(status=200, body="<!doctype html><title>Merchant</title><p>Thank you</p>",
                   headers={"Content-Type": "text/html"})
    with Receiver(default=thanks) as shop_site:
        yield shop_site


def _session(api, tm, merchant_site, **overrides) -> dict:
    overrides.setdefault("returnUrl", merchant_site.url("/shop/return"))
    response = api.post("/api/v2/payments", session_body(tm, **overrides), format="json", HTTP_X_API_KEY=tm.api_key)
    assert response.status_code == 200, response.content
    return response.json()


def _open(page, session: dict) -> None:
    page.goto(f"{session['checkoutUrl']}?clientSecret={session['clientSecret']}")
    page.locator("[data-method]").first.wait_for()


def _submit(page, method: str) -> None:
    page.locator(f"details:has([data-method={method}]) .method-body button[type=submit]").click()


@pytest.mark.parametrize("language", ["en", "hi"])
def test_every_state_of_the_checkout_keeps_its_policy(watched, api, merchant_site, site, language):
    shop = make_merchant(name="Chai Point Stores")
    set_brand(shop, display_name="Chai Point", accent_color="#0f766e", logo_png=a_logo())  # the nonce'd style
    page, violations = watched()

    def clean(state: str) -> None:
        page.wait_for_load_state("load")
        violations.assert_none(page, f"the checkout ({language}): {state}")

    _open(page, _session(api, shop, merchant_site, language=language))
    clean("methods")
    for control in page.locator("[data-method]").all():
        if control.is_visible() and control.is_enabled():
            control.click()
            clean(f"the {control.get_attribute('data-method')} form")
    page.click("[data-method=CARD]")
    page.fill("input[name=card_number]", "4111 1111 1111 1112")
    _submit(page, "CARD")
    clean("card errors")
    page.fill("input[name=card_number]", "4111 1111 1111 1111")
    page.fill("input[name=card_expiry]", "12/39")
    page.fill("input[name=card_cvv]", "123")
    _submit(page, "CARD")
    page.locator("input[name=otp]").wait_for()
    clean("3-D Secure")
    page.fill("input[name=otp]", "000000")
    page.locator("form:has(input[name=otp]) button[type=submit]").click()
    page.locator("[data-attempt=failed]").wait_for()
    clean("failed attempt")
    page.click("[data-method=UPI]")
    page.fill("input[name=vpa]", "timeout@sandbox")
    _submit(page, "UPI")
    page.locator("[data-action=change-method]").wait_for()
    clean("UPI waiting")
    page.click("[data-action=change-method]")
    page.click("[data-method=NB]")
    page.select_option("select[name=bank]", "HDFC")
    _submit(page, "NB")
    page.locator("[data-decision=approve]").wait_for()
    clean("the sandbox bank")
    page.click("[data-decision=approve]")
    page.locator("[data-payment-status=SUCCESS]").wait_for()
    clean("result: paid")

    for method in ("NEFT", "CHALLAN"):
        _open(page, _session(api, shop, merchant_site, language=language))
        page.click(f"[data-method={method}]")
        _submit(page, method)
        page.locator("[data-reference]").wait_for()
        clean(f"{method} details")
    page.goto(f"{site}/sandbox/transfers")
    clean("the sandbox's incoming transfers")
    _open(page, _session(api, shop, merchant_site, language=language))
    page.click("[data-method=WALLET]")
    page.select_option("select[name=wallet]", page.locator("select[name=wallet] option[value]:not([value=''])")
                       .first.get_attribute("value"))
    _submit(page, "WALLET")
    page.locator("[data-decision]").first.wait_for()
    clean("the sandbox wallet")
    _open(page, _session(api, shop, merchant_site, language=language))
    page.click("[data-action=cancel]")
    page.locator("[data-action=cancel-confirm]").wait_for()
    clean("the cancel question")
    page.click("[data-action=cancel-confirm]")
    page.locator("[data-payment-status=FAILED]").wait_for()
    clean("result: cancelled")
    page.goto(f"{site}/checkout/pay_nothing?clientSecret=wrong")
    clean("error page")


def test_a_payment_link_opens_under_the_policy(watched, site):
    shop = make_merchant(name="Chai Point Stores")
    link = payment_link_create(merchant=shop.merchant, actor=None, request=LinkRequest(
        amount=49_900, description="Masala chai sampler", customer_phone="9876543210"))
    page, violations = watched()
    page.goto(link_url(link))  # /pay/<token>: the address staff send the customer
    page.locator("[data-method]").first.wait_for()
    violations.assert_none(page, "a payment link")


def test_the_sandbox_pages_the_inbox_and_the_api_docs_keep_their_policy(watched, site):
    shop = make_merchant(code="DEMO", name="Demo Store")
    address = merchant_point_to_inbox(merchant=shop.merchant, actor="test")
    make_payment(shop, status="SUCCESS")
    for delivery in WebhookDelivery.objects.filter(merchant=shop.merchant):
        delivery_attempt_run(delivery.pk)
    page, violations = watched(LAPTOP)

    page.goto(address)
    page.locator("article summary").first.click()
    violations.assert_none(page, "the webhook inbox")
    page.goto(f"{site}/sandbox/upi")
    violations.assert_none(page, "the sandbox UPI app")
    page.fill("#upiUri", "upi://pay?pa=nobody@sandbox&am=1.00&cu=INR&tr=NOPE")
    page.locator("input[name=payerVpa]").first.check()
    page.click("button[type=submit]")
    page.locator("#error").wait_for()
    violations.assert_none(page, "the sandbox UPI app's error")
    page.goto(f"{site}/api/docs/")
    page.wait_for_selector(".opblock", timeout=30_000)  # Swagger UI ran and read the schema
    violations.assert_none(page, "the API docs")


def _console_links(page, site: str) -> set[str]:
    hrefs = page.locator("a[href]").evaluate_all("all => all.map(a => a.href)")
    found = set()
    for href in hrefs:
        parts = urlsplit(urljoin(page.url, href))
        if f"{parts.scheme}://{parts.netloc}" != site or not parts.path.startswith("/admin/"):
            continue
        if any(word in parts.path for word in ("/logout", "/delete/", "/password/")):
            continue
        found.add(parts.path)  # one visit per path: a list's filters and sorts share its page
    return found


def test_every_console_page_reachable_from_the_front_page_keeps_its_policy(watched, site, receiver_site):
    shop = make_merchant(code="SHOP", name="Chai Point Stores", webhook_url=receiver_site.url("/hooks"))
    # Every role's pages at once: finance's forms (a refund, a payment link) and the administrators'.
    admin = staff_in("administrators", username="admin-policy", password=PASSWORD)
    admin.groups.add(*Group.objects.filter(name__in=("support", "finance")))
    story_payment(shop, refund_by=admin, receiver=receiver_site)
    payment_link_create(merchant=shop.merchant, actor=admin, request=LinkRequest(
        amount=49_900, description="Masala chai sampler", customer_phone="9876543210"))
    page, violations = watched(LAPTOP)
    _sign_in(page, site, "admin-policy")
    violations.assert_none(page, "the console's sign-in")

    seen, queue = set(), ["/admin/"]
    while queue and len(seen) < 150:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        try:
            response = page.goto(site + path)
        except PlaywrightError as exc:  # a download (the settlement export) is not a page
            assert "Download is starting" in str(exc), exc
            continue
        if not response.headers.get("content-type", "").startswith("text/html"):
            continue
        page.wait_for_load_state("load")
        violations.assert_none(page, f"the console: {path}")
        queue.extend(sorted(_console_links(page, site) - seen))
    # The crawl reached the pages staff use most, not only the front page.
    print(f"{len(seen)} console pages visited")
    assert {"/admin/payments/payment/", "/admin/refunds/refund/", "/admin/payments/paymentlink/add/",
            "/admin/webhooks/webhookdelivery/"} <= seen, sorted(seen)
    assert any(path.startswith("/admin/payments/payment/") and path.endswith("/change/") for path in seen)
    assert any(path.startswith("/admin/refunds/refund/initiate/") for path in seen), sorted(seen)

    # The page that refuses: support may not make a payment link.
    staff_in("support", username="support-policy", password=PASSWORD)
    page, violations = watched(LAPTOP)
    _sign_in(page, site, "support-policy")
    assert page.goto(f"{site}/admin/payments/paymentlink/add/").status == 403
    violations.assert_none(page, "the console's 403 page")


def _sign_in(page, site: str, username: str) -> None:
    page.goto(f"{site}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{site}/admin/")


@pytest.fixture
def receiver_site():
    with Receiver() as receiver:
        yield receiver


def test_the_watch_hears_every_kind_of_violation(chromium):
    """The watch itself, on a page that breaks a policy four ways, so that the tests above cannot
    pass by hearing nothing."""
    context = chromium.new_context()
    violations = PolicyViolations(context)
    body = ("<!doctype html><title>x</title><style>p{color:red}</style><p style='color:blue'>x</p>"
            "<script>document.title='ran'</script><img src='https://elsewhere.example/x.png'>")
    context.route("http://policy.test/", lambda route: route.fulfill(status=200, body=body, headers={
        "Content-Type": "text/html", "Content-Security-Policy": "default-src 'self'; img-src 'self'"}))
    page = context.new_page()
    page.goto("http://policy.test/")
    page.wait_for_load_state("load")
    page.evaluate("0")
    directives = {v["directive"] for v in violations.events}
    assert {"style-src-elem", "style-src-attr", "script-src-elem", "img-src"} <= directives, violations.report()
    assert len(violations.console) >= 3 and page.title() == "x"
    with pytest.raises(AssertionError, match="style-src-attr"):
        violations.assert_none(page, "a page that breaks its policy")
    context.close()
