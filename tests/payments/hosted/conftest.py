"""Fixtures of the hosted-checkout tests: sessions made through the API (their bodies:
tests.support.factories.session_body), and one real Chromium (Playwright) shared by the whole run."""
from __future__ import annotations

import hashlib
import hmac
import os
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.support.browser import shared_chromium
from tests.support.factories import TestMerchant, make_merchant, session_body

URL = "/api/v2/payments"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
ARTIFACTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "artifacts")


def independent_return_signature(secret_key: str, query: str) -> str:
    """The return-redirect signature written from CONTRACT.md alone (not gateway.core.signing): the
    parameters as a merchant's framework decodes them, every one but `signature`, as key=value
    sorted by key and joined with '|', HMAC-SHA256 with the secret key, lowercase hex."""
    params = dict(parse_qsl(query, keep_blank_values=True))
    params.pop("signature", None)
    message = "|".join(f"{key}={params[key]}" for key in sorted(params))
    return hmac.new(secret_key.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).hexdigest()


def return_query(url: str) -> dict:
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


@pytest.fixture
def shop(db) -> TestMerchant:
    return make_merchant(name="Chai Point Stores")


@pytest.fixture
def create_session(api):
    """create_session(tm, **overrides) -> the JSON of a successful POST /api/v2/payments."""

    def _create(tm: TestMerchant, **overrides) -> dict:
        response = api.post(URL, session_body(tm, **overrides), format="json", HTTP_X_API_KEY=tm.api_key)
        assert response.status_code == 200, response.content
        return response.json()

    return _create


# --- the browser ------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    """One Chromium for the whole run (never `playwright install`: the system's Chromium),
    shared with the other test directories that drive a browser (tests.support.browser)."""
    with shared_chromium() as chromium:
        yield chromium


@pytest.fixture
def merchant_site():
    """The merchant's own web server (a real one on loopback), where returnUrl points."""
    from tests.support.receiver import Receiver, Reply

    thanks = Reply(status=200, body="<!doctype html><title>Merchant</title><p>Thank you</p>",
                   headers={"Content-Type": "text/html"})
    with Receiver(default=thanks) as site:
        yield site


@pytest.fixture
def checkout(browser, live_server, settings):
    """A fresh browser context (cookies and all) at phone size, on the live server."""
    settings.GATEWAY_PUBLIC_URL = live_server.url
    settings.CHECKOUT_RESULT_REDIRECT_SECONDS = 1  # the result page's wait (default 5 s), shortened
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def start(checkout, create_session, shop, merchant_site):
    """start(**overrides) -> the session: created by the merchant (returnUrl on its own server)
    and opened in the browser, as the merchant's redirect would."""

    def _start(**overrides) -> dict:
        overrides.setdefault("returnUrl", merchant_site.url("/shop/return"))
        session = create_session(shop, **overrides)
        open_checkout(checkout, session)
        return session

    return _start


def open_checkout(page, session: dict) -> None:
    """What the merchant does: send the customer to checkoutUrl?clientSecret=..."""
    page.goto(f"{session['checkoutUrl']}?clientSecret={session['clientSecret']}")


def wait_for_return(page, site) -> dict:
    """Wait until the browser has landed on the merchant's site; its query parameters."""
    prefix = site.url("/shop/return") + "?"
    page.wait_for_url(lambda url: url.startswith(prefix))
    return return_query(page.url)


def assert_attempt_failed(page, session: dict, why: str) -> None:
    """The failed attempt is on the methods page (CONTRACT.md) and the payment is still open."""
    from payments.models import Payment

    notice = page.locator("[data-attempt=failed]")
    assert why in notice.inner_text()
    assert page.locator("[data-method=CARD]").count() == 1 and page.locator("[data-action=cancel]").count() == 1
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "PENDING"


def submit(page, method: str) -> None:
    """Press the one submit button of the open method's form."""
    page.locator(f"details:has([data-method={method}]) .method-body button[type=submit]").click()
