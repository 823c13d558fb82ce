"""Issue 33, cards in Chromium: in production's default card mode (CARD_FORM_MODE=processor) a
card is paid in Razorpay's own checkout frame (Standard Checkout), and the card number never
reaches our process.

Razorpay is the stateful double (every API answer, and the checkout's own answers, checked
against our schema of Razorpay's shapes), which also serves a local stand-in of checkout.js with
the real script's interface (its frame is of the double's origin, as the real one is
Razorpay's). Our server runs as a live server in production mode; the page's
Content-Security-Policy is the one production sends, with the double's origin as Razorpay's.

What "never reaches our process" is held to, as for Cashfree's fields
(tests/acquirer_cashfree/test_card_fields_browser.py): no field of our page carries the number,
no request the browser sends to our origin carries it, no request our server handled carries
it, nothing we stored does; and the double did receive it, in the one checkout payment its
frame sent, so the test cannot pass by typing nothing. The return carries Razorpay's signed
answer, which our server checks before the status query (which captures) decides."""
from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from payments.models import Payment, PaymentEvent
from tests.acquirer_cashfree.test_card_fields_browser import ServerRecord, our_fields_carrying
from tests.acquirer_razorpay.double import CARD_OTP
from tests.payments.hosted.conftest import DESKTOP, browser, create_session, open_checkout  # noqa: F401
from tests.payments.s2s.conftest import s2s_merchant  # noqa: F401 - a fixture
from tests.support.browser import PolicyViolations

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status
PAN = "4111111111111111"
PAN_FORMS = (PAN, "4111 1111 1111 1111", "4111-1111-1111-1111", "411111111111")  # its first 12 digits too
CVV = "739"
FRAME = "iframe.razorpay-checkout-frame"


@pytest.fixture
def production_card_page(browser, live_server, settings, monkeypatch, razorpay_double,  # noqa: F811
                         create_session, s2s_merchant):  # noqa: F811
    """A customer's Chromium on the production checkout of a fresh session, in the processor
    card mode, Razorpay being the double (and checkout.js its stand-in)."""
    settings.GATEWAY_ENV, settings.IS_PRODUCTION = "production", True
    settings.CARD_FORM_MODE = "processor"
    settings.GATEWAY_PUBLIC_URL = live_server.url
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    settings.RAZORPAY_CHECKOUT_JS_URL = razorpay_double.checkout_js_url
    server = ServerRecord(monkeypatch)
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    violations = PolicyViolations(context)
    to_us: list[tuple[str, str, str]] = []
    origins: set[str] = set()
    ours = urlsplit(live_server.url).netloc

    def heard(request):
        parts = urlsplit(request.url)
        origins.add(f"{parts.scheme}://{parts.netloc}")
        if parts.netloc == ours:
            body = request.post_data_buffer or b""
            to_us.append((request.url, body.decode("utf-8", "replace"), json.dumps(request.headers)))

    context.on("request", heard)
    tab = context.new_page()
    session = create_session(s2s_merchant, amount=25000, customerPhone="9876543210")
    open_checkout(tab, session)
    tab.click("[data-method=CARD]")
    tab.wait_for_function("() => !document.querySelector('[data-card-fields-pay]').disabled")
    yield {"tab": tab, "session": session, "server": server, "to_us": to_us, "violations": violations,
           "origins": origins, "live": live_server.url,
           "double": razorpay_double, "payment": Payment.objects.get(payment_id=session["paymentId"])}
    context.close()


def pay_in_frame(tab, *, number=PAN, expiry="12/30", cvv=CVV, otp=CARD_OTP) -> None:
    tab.click("[data-card-fields-pay]")
    frame = tab.frame_locator(FRAME)
    frame.locator("#card-number").fill(number)
    frame.locator("#card-expiry").fill(expiry)
    frame.locator("#card-cvv").fill(cvv)
    assert our_fields_carrying(tab, PAN_FORMS + (CVV,)) == []
    frame.locator("[data-rzp-pay]").click()
    frame.locator("#otp").fill(otp)
    frame.locator("[data-rzp-otp]").click()


def test_a_card_paid_in_razorpays_frame_ends_success_captured(production_card_page):
    tab, payment, double = production_card_page["tab"], production_card_page["payment"], production_card_page["double"]
    # Our page has no card input: the card is typed into Razorpay's frame, opened on Pay.
    assert tab.locator("input[name=card_number], input[name=card_cvv], input[name=card_expiry]").count() == 0
    assert tab.locator(FRAME).count() == 0
    pay_in_frame(tab)
    tab.wait_for_url("**/result")
    assert tab.locator("[data-payment-status]").get_attribute("data-payment-status") == "SUCCESS"
    payment.refresh_from_db()
    assert (payment.status, payment.payment_mode) == (S.SUCCESS, "CARD")
    assert payment.bank_rrn and not payment.card_last4  # the card never came here, not even its last 4
    # The frame's payment was authorized at Razorpay; our status query captured it.
    (paid,) = double.payments_of(payment.sabpaisa_txn_id)
    assert (paid["method"], paid["status"]) == ("card", "captured")
    assert any(call.path == f"/v1/payments/{paid['id']}/capture" for call in double.calls)
    # The customer came back with Razorpay's signed answer for that payment.
    [back] = [url for url, _, _ in production_card_page["to_us"] if "/back?" in url]
    said = parse_qs(urlsplit(back).query)
    assert said["razorpay_payment_id"] == [paid["id"]] and said["razorpay_order_id"] == [paid["order_id"]]
    assert len(said["razorpay_signature"][0]) == 64
    production_card_page["violations"].assert_none(tab, "the card page, Razorpay's frame and the result")
    # The browser fetched from two origins only: ours, and the processor's (the double, as Razorpay).
    assert production_card_page["origins"] == {production_card_page["live"], double.origin}


def test_the_card_number_never_reaches_our_process(production_card_page):
    tab, payment, double = production_card_page["tab"], production_card_page["payment"], production_card_page["double"]
    pay_in_frame(tab)
    tab.wait_for_url("**/result")

    to_us = production_card_page["to_us"]
    server = production_card_page["server"].requests
    # The attempt was opened through us (the recorders saw that request's body) and confirmed through us.
    assert any(url.endswith("/card/fields") and "csrfmiddlewaretoken" in body for url, body, _ in to_us)
    assert any(path.endswith("/card/fields") and b"csrfmiddlewaretoken" in body for _, path, body, _ in server)
    assert any("/back" in path for _, path, _, _ in server)
    assert [url for url, body, headers in to_us if any(n in url or n in body or n in headers for n in PAN_FORMS)] == []
    assert production_card_page["server"].carrying(PAN_FORMS + (CVV,)) == []
    stored = json.dumps(list(PaymentEvent.objects.filter(payment=payment).values("detail")))
    stored += json.dumps(list(Payment.objects.filter(pk=payment.pk).values()), default=str)
    assert not any(n in stored for n in PAN_FORMS)
    # It did go somewhere: in the one checkout payment Razorpay's frame sent to Razorpay.
    [pay] = [call for call in double.calls if call.path == "/v1/payments/create/checkout"]
    assert pay.body["card"]["number"] == PAN
    assert sum(PAN.encode() in body for body in double.seen) == 1


def test_a_card_the_issuer_declines_is_a_failed_attempt_and_the_methods_come_back(production_card_page):
    tab, payment = production_card_page["tab"], production_card_page["payment"]
    pay_in_frame(tab, otp="000000")
    tab.wait_for_selector("[data-attempt=failed]")
    payment.refresh_from_db()
    assert (payment.status, payment.failed_attempts) == (S.PENDING, 1)


def test_closing_razorpays_frame_before_paying_gives_the_methods_back(production_card_page):
    tab, payment = production_card_page["tab"], production_card_page["payment"]
    tab.click("[data-card-fields-pay]")
    with tab.expect_navigation():  # to our return address, then the methods again
        tab.frame_locator(FRAME).locator("[data-rzp-close]").click()
    tab.wait_for_selector("[data-method=CARD]")
    payment.refresh_from_db()
    assert (payment.status, payment.failed_attempts) == (S.PENDING, 0)  # abandoned: no card was sent
