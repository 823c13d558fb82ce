"""Routing across two acquirers (issue 33): a merchant's ordered choice per method, the one safe
failover at order creation, and every later call about a payment going to the acquirer that took
it. Both acquirers are their stateful doubles over real HTTP on loopback."""
from __future__ import annotations

import pytest
from gateway.core.errors import ServiceUnavailable
from django.test import Client

from payments.admin import AcquirerRouteForm
from payments.acquirer import acquirer_for
from payments.models import AcquirerRoute, Payment, PaymentEvent
from payments.services.routing import route_for
from payments.services.upi import hosted_upi_intent, upi_pay
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
from tests.support.two_acquirers import both, failing  # noqa: F401 - a fixture
from tests.payments.hosted.conftest import create_session  # noqa: F401 - a fixture
from tests.payments.s2s.conftest import post, s2s_merchant  # noqa: F401 - fixtures
from tests.support.factories import make_payment, signed_body

pytestmark = pytest.mark.django_db



def route(merchant, method, acquirers):
    AcquirerRoute.objects.create(merchant_id=merchant.pk if hasattr(merchant, "pk") else merchant.merchant.pk,
                                 method=method, acquirers=acquirers)


def merchant_of(test_merchant):
    return test_merchant.merchant


def checkout_payment(merchant) -> Payment:
    """An open checkout of ₹250 with the customer's mobile and email (Cashfree asks both)."""
    payment = make_payment(merchant, status=Payment.Status.PENDING, amount=25000)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="9876543210", customer_email="asha@example.in")
    return Payment.objects.get(pk=payment.pk)


def register_event(payment: Payment) -> dict:
    return payment.events.get(kind=PaymentEvent.Kind.ACQUIRER, detail__step="upi_register").detail


def test_without_a_route_the_configured_acquirer_takes_everything(both, s2s_merchant):
    assert route_for(merchant_of(s2s_merchant).pk, "UPI") == ["cashfree"]


def test_the_method_row_wins_over_the_merchants_default_and_unusable_names_are_skipped(both, s2s_merchant, settings):
    merchant = merchant_of(s2s_merchant)
    route(merchant, "ANY", "cashfree,razorpay")
    route(merchant, "UPI", "razorpay,sandbox,cashfree")
    assert route_for(merchant.pk, "UPI") == ["razorpay", "cashfree"]  # sandbox: not enabled here
    assert route_for(merchant.pk, "CARD") == ["cashfree", "razorpay"]
    assert route_for(merchant.pk, "NEFT") == ["cashfree"]  # Razorpay does not carry NEFT


def test_s2s_upi_goes_to_the_first_of_the_route(both, post, s2s_merchant):
    cashfree, razorpay = both
    route(merchant_of(s2s_merchant), "UPI", "razorpay,cashfree")
    response = post(s2s_merchant, signed_body(s2s_merchant, paymentMode="UPI_INTENT"))
    assert response.status_code == 201, response.content
    payment = Payment.objects.get(payment_id=response.json()["paymentId"])
    assert payment.acquirer == "razorpay" and response.json()["intentUrl"].startswith("upi://pay?pa=razorpay")
    assert register_event(payment)["route"] == {"tried": ["razorpay"], "why": "first of the route for UPI",
                                                "failed": []}
    assert cashfree.calls == []


@pytest.mark.parametrize("failure", ["5xx", "refused connection", "429"])
def test_a_technical_failure_at_order_creation_fails_over_once_to_the_next(both, post, s2s_merchant, failure):
    cashfree, razorpay = both
    if failure == "5xx":
        razorpay.unavailable = True
    elif failure == "429":
        razorpay.throttled = 60
    else:
        razorpay.stop()
    route(merchant_of(s2s_merchant), "UPI", "razorpay,cashfree")
    response = post(s2s_merchant, signed_body(s2s_merchant, paymentMode="UPI_QR"))
    assert response.status_code == 201, response.content
    payment = Payment.objects.get(payment_id=response.json()["paymentId"])
    assert payment.acquirer == "cashfree"
    assert response.json()["upiQrString"].startswith("upi://pay?pa=cashfree@double")
    story = register_event(payment)
    assert story["acquirer"] == "cashfree" and story["route"]["tried"] == ["razorpay", "cashfree"]
    assert story["route"]["failed"][0]["acquirer"] == "razorpay"
    assert story["route"]["why"].startswith("failover: razorpay")
    # Every later call about it goes to Cashfree.
    assert acquirer_for(payment).name == "cashfree"


def test_a_refusal_is_an_answer_not_a_failure_and_never_fails_over(both, post, s2s_merchant):
    cashfree, razorpay = both
    razorpay.refuse_payments = True
    route(merchant_of(s2s_merchant), "UPI", "razorpay,cashfree")
    response = post(s2s_merchant, signed_body(s2s_merchant, paymentMode="UPI_QR"))
    assert (response.status_code, response.json()["errorCode"]) == (400, "PAYMENT_FAILED")
    assert cashfree.calls == [] and not Payment.objects.exists()


def test_both_failing_is_unavailable_and_each_is_asked_once(both, post, s2s_merchant):
    cashfree, razorpay = both
    razorpay.unavailable = cashfree.unavailable = True
    route(merchant_of(s2s_merchant), "UPI", "razorpay,cashfree")
    response = post(s2s_merchant, signed_body(s2s_merchant, paymentMode="UPI_QR"))
    assert response.json()["errorCode"] == "SERVICE_UNAVAILABLE"
    assert len(razorpay.calls) == 1  # its first call (finding the order) failed: not asked again
    assert len([c for c in cashfree.calls if c.path.endswith("/orders")]) == 1
    assert not Payment.objects.exists()


def test_hosted_upi_fails_over_on_the_same_attempt_and_stays_there(both, s2s_merchant):
    cashfree, razorpay = both
    merchant = merchant_of(s2s_merchant)
    route(merchant, "UPI", "razorpay,cashfree")
    payment = checkout_payment(merchant)
    razorpay.unavailable = True
    payment = hosted_upi_intent(payment_id=payment.pk)
    assert (payment.status, payment.acquirer, payment.attempt) == (Payment.Status.PROCESSING, "cashfree", 1)
    event = payment.events.get(kind=PaymentEvent.Kind.ACQUIRER, detail__step="upi_intent")
    assert event.detail["upi_link"].startswith("upi://pay?pa=cashfree@double")
    assert event.detail["route"]["why"].startswith("failover: razorpay")
    # Razorpay back: the payment stays with the acquirer whose link the customer holds.
    razorpay.unavailable = False
    assert acquirer_for(payment).name == "cashfree"


def test_hosted_upi_collect_goes_to_the_first_of_the_route_and_never_fails_over(both, s2s_merchant):
    # A customer typing their VPA on the checkout: the request follows the merchant's route (it
    # went to the configured acquirer, whatever the route said). A collect request whose answer
    # was lost may already be in the payer's app, so a technical failure is the attempt's: the
    # payment stays with that acquirer and the customer may try again; an acquirer already out
    # of rotation is passed over before anything is sent.
    cashfree, razorpay = both
    merchant = merchant_of(s2s_merchant)
    route(merchant, "UPI", "razorpay,cashfree")
    first = checkout_payment(merchant)
    first = upi_pay(payment_id=first.pk, payer_vpa="asha@okaxis")
    assert (first.status, first.acquirer) == (Payment.Status.PROCESSING, "razorpay")
    assert [p["vpa"] for p in razorpay.payments_of(first.sabpaisa_txn_id)] == ["asha@okaxis"]
    assert first.sabpaisa_txn_id not in cashfree.orders
    event = first.events.get(kind=PaymentEvent.Kind.ACQUIRER, detail__step="upi_pay")
    assert event.detail["route"] == {"tried": ["razorpay"], "failed": [],
                                     "why": "first of the route for UPI (upi_pay never fails over)"}

    second = checkout_payment(merchant)
    razorpay.unavailable = True
    with pytest.raises(ServiceUnavailable):
        upi_pay(payment_id=second.pk, payer_vpa="asha@okaxis")
    second.refresh_from_db()
    assert (second.acquirer, second.payer_vpa) == ("razorpay", "")  # its claim given back: try again
    assert second.sabpaisa_txn_id not in cashfree.orders

    failing("razorpay", "UPI")
    third = upi_pay(payment_id=checkout_payment(merchant).pk, payer_vpa="asha@okaxis")
    assert (third.status, third.acquirer) == (Payment.Status.PROCESSING, "cashfree")


def test_the_card_fields_are_those_of_the_acquirer_the_card_route_names(both, s2s_merchant, create_session, settings):
    # Cashfree configured, cards routed to Razorpay first: the page draws Razorpay's own card
    # page and Pay opens the order there (both were the configured acquirer's).
    cashfree, razorpay = both
    settings.CARD_FORM_MODE = "processor"
    settings.RAZORPAY_CHECKOUT_JS_URL = razorpay.checkout_js_url
    settings.CASHFREE_JS_URL = "https://sdk.cashfree.com/js/v3/cashfree.js"
    route(merchant_of(s2s_merchant), "CARD", "razorpay,cashfree")
    session = create_session(s2s_merchant, amount=25000)
    browser = Client()
    browser.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    methods = browser.get(f"/checkout/{session['paymentId']}").content.decode()
    assert razorpay.checkout_js_url in methods and "sdk.cashfree.com" not in methods
    opened = browser.post(f"/checkout/{session['paymentId']}/card/fields", HTTP_ACCEPT="application/json")
    assert opened.status_code == 200, opened.content
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert payment.acquirer == "razorpay"
    assert [o["receipt"] for o in razorpay.orders.values()] == [payment.sabpaisa_txn_id]
    assert payment.sabpaisa_txn_id not in cashfree.orders


def test_a_method_the_configured_acquirer_lacks_is_offered_when_the_route_names_one_that_carries_it(
        both, s2s_merchant, settings):
    # Razorpay configured (it carries no NEFT), Cashfree beside it: a merchant whose NEFT route
    # names Cashfree is offered NEFT, and only that merchant. The configured acquirer's methods
    # decided for everyone.
    from payments.acquirer import _load
    from payments.checkout.availability import methods_on_page
    from payments.services.acquirer_methods import acquirer_methods
    from tests.support.factories import make_merchant

    settings.GATEWAY_ACQUIRER, settings.GATEWAY_ACQUIRERS = "razorpay", ["razorpay", "cashfree"]
    _load.cache_clear()
    merchant = merchant_of(s2s_merchant)
    route(merchant, "NEFT", "cashfree")
    other = make_merchant(name="Unrouted Stores").merchant
    assert "NEFT" in acquirer_methods(merchant.pk) and "NEFT" not in acquirer_methods(other.pk)
    payment = make_payment(merchant, status=Payment.Status.PENDING, amount=25000)
    neft = next(shown for shown in methods_on_page(payment) if shown.code == "NEFT")
    assert neft.usable
    _load.cache_clear()


def test_a_notice_of_another_acquirer_than_the_payments_is_not_applied(both, s2s_merchant):
    from django.test import Client

    cashfree, razorpay = both
    merchant = merchant_of(s2s_merchant)
    route(merchant, "UPI", "cashfree")
    payment = checkout_payment(merchant)
    payment = hosted_upi_intent(payment_id=payment.pk)
    assert payment.acquirer == "cashfree"
    forged_order = {"id": "pay_X", "entity": "payment", "amount": 25000, "currency": "INR", "status": "captured",
                    "amount_refunded": 0, "refund_status": None, "error_code": None, "error_description": None,
                    "notes": {"sabpaisa_txn_id": payment.sabpaisa_txn_id}, "created_at": 1}
    headers, body = razorpay.signed({"entity": "event", "event": "payment.captured", "contains": ["payment"],
                                     "payload": {"payment": {"entity": forged_order}},
                                     "created_at": __import__("time").time().__int__()})
    answer = Client().post("/acquirer/razorpay/webhooks", body, content_type="application/json",
                           HTTP_X_RAZORPAY_SIGNATURE=headers["X-Razorpay-Signature"])
    assert answer.status_code == 200 and answer.json()["status"] == "IGNORED"
    payment.refresh_from_db()
    assert payment.status == Payment.Status.PROCESSING


@pytest.mark.parametrize("method, acquirers, error", [
    ("UPI", "razorpay,paypal", "Not enabled here: paypal"),
    ("NEFT", "razorpay", "razorpay does not carry NEFT"),
    ("UPI", "cashfree,cashfree", "named twice"),
])
def test_the_console_refuses_a_route_it_cannot_honour(both, s2s_merchant, method, acquirers, error):
    form = AcquirerRouteForm(data={"merchant": merchant_of(s2s_merchant).pk, "method": method, "acquirers": acquirers})
    assert not form.is_valid() and error in str(form.errors)


def test_the_console_takes_an_ordered_route(both, s2s_merchant):
    form = AcquirerRouteForm(data={"merchant": merchant_of(s2s_merchant).pk, "method": "UPI",
                                   "acquirers": " razorpay , cashfree "})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["acquirers"] == "razorpay,cashfree"


def test_the_consoles_story_shows_the_route_and_why(both, post, s2s_merchant):
    from gateway.console.story import payment_story

    cashfree, razorpay = both
    razorpay.unavailable = True
    route(merchant_of(s2s_merchant), "UPI", "razorpay,cashfree")
    response = post(s2s_merchant, signed_body(s2s_merchant, paymentMode="UPI_QR"))
    payment = Payment.objects.get(payment_id=response.json()["paymentId"])
    titles = [entry.title for entry in payment_story(payment).entries]
    assert any("routed to cashfree (failover: razorpay AcquirerUnavailable)" in title for title in titles), titles
