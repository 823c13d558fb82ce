"""The checkout's degraded notice (issue 33): a method failing on every acquirer that would take
this payment says so on the methods page, keeps its form, and suggests a method that is not
failing; reading the health for it never takes the probe a payment should make. Health counted
in the real Redis, the page rendered by Django."""
from __future__ import annotations

import pytest
from django.test import Client

from payments.models import AcquirerRoute, Payment
from payments.services import acquirer_health as health
from payments.services.acquirer_health import health_out, out_of_rotation
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
from tests.support.two_acquirers import both, failing  # noqa: F401 - a fixture
from tests.payments.hosted.conftest import create_session, shop  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db




def methods_page(create_session, shop, language: str = "en", **overrides) -> tuple[str, Payment]:  # noqa: F811
    session = create_session(shop, **overrides)
    browser = Client()
    if language != "en":
        browser.cookies["checkout_language"] = language
    response = browser.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}", follow=True)
    assert response.status_code == 200
    return response.content.decode(), Payment.objects.get(payment_id=session["paymentId"])


def method_block(html: str, code: str) -> str:
    start = html.index(f'id="method-{code}"')
    return html[start:html.index("</details>", start)]


def routed(shop, method: str, acquirers: str) -> None:  # noqa: F811
    AcquirerRoute.objects.create(merchant_id=shop.merchant.pk, method=method, acquirers=acquirers)


def test_upi_failing_on_every_acquirer_of_the_route_says_so_keeps_its_form_and_suggests_another(
        both, create_session, shop):  # noqa: F811
    routed(shop, "UPI", "razorpay,cashfree")
    failing("razorpay", "UPI")
    failing("cashfree", "UPI")
    html, _ = methods_page(create_session, shop)
    upi = method_block(html, "UPI")
    assert 'data-available="true"' in upi and 'data-degraded="true"' in upi
    assert "UPI payments are failing more often than usual right now" in upi
    assert 'data-instead="NB"' in upi  # net banking: the first of UPI's alternatives offered
    assert 'data-degraded="true"' not in method_block(html, "NB")


def test_one_acquirer_of_the_route_still_answering_is_no_notice(both, create_session, shop):  # noqa: F811
    routed(shop, "UPI", "razorpay,cashfree")
    failing("razorpay", "UPI")
    html, _ = methods_page(create_session, shop)
    assert "data-degraded" not in html


def test_the_acquirer_the_merchant_does_not_route_to_does_not_count(both, create_session, shop):  # noqa: F811
    routed(shop, "UPI", "razorpay")
    failing("cashfree", "UPI")
    assert "data-degraded" not in methods_page(create_session, shop)[0]
    failing("razorpay", "UPI")
    assert 'data-degraded="UPI"' in methods_page(create_session, shop)[0]


def test_a_payment_already_with_an_acquirer_is_degraded_when_that_one_is(both, create_session, shop):  # noqa: F811
    routed(shop, "UPI", "razorpay,cashfree")
    failing("razorpay", "UPI")
    session = create_session(shop)
    Payment.objects.filter(payment_id=session["paymentId"]).update(acquirer="razorpay")
    html = Client().get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}",
                        follow=True).content.decode()
    assert 'data-degraded="UPI"' in html  # every later attempt goes to Razorpay, failing for UPI


def test_with_one_acquirer_deployed_its_failing_method_is_degraded(create_session, shop):  # noqa: F811
    # The tests' deployment: the sandbox alone.
    failing("sandbox", "CARD")
    html, _ = methods_page(create_session, shop)
    card = method_block(html, "CARD")
    assert 'data-degraded="CARD"' in card and 'data-instead="NB"' in card
    assert "<form" in card  # still its form
    assert "data-degraded" not in method_block(html, "UPI")


def test_the_notice_speaks_hindi(create_session, shop):  # noqa: F811
    failing("sandbox", "UPI")
    html, _ = methods_page(create_session, shop, language="hi")
    assert "अभी UPI पेमेंट सामान्य से ज़्यादा फ़ेल हो रहे हैं" in method_block(html, "UPI")


def test_every_method_failing_suggests_none(create_session, shop):  # noqa: F811
    for code in ("UPI", "CARD", "NB", "WALLET", "NEFT", "RTGS", "CHALLAN"):
        failing("sandbox", code)
    html, _ = methods_page(create_session, shop)
    upi = method_block(html, "UPI")
    assert 'data-degraded="UPI"' in upi and "data-instead" not in upi
    assert "You can still try." in upi


def test_showing_the_notice_takes_no_probe(create_session, shop):  # noqa: F811
    failing("sandbox", "UPI")
    for _ in range(3):
        assert 'data-degraded="UPI"' in methods_page(create_session, shop)[0]
    # The first payment to route still probes the acquirer; the next routes around it.
    assert health_out("sandbox", "UPI") is False
    assert health_out("sandbox", "UPI") is True


def test_reading_out_of_rotation_is_the_rule_health_out_applies():
    failing("razorpay", "UPI", calls=health.MIN_CALLS - 1)
    assert out_of_rotation([("razorpay", "UPI")]) == set()
    failing("razorpay", "UPI", calls=1)
    assert out_of_rotation([("razorpay", "UPI"), ("cashfree", "UPI"), ("razorpay", "CARD")]) == {("razorpay", "UPI")}
    assert out_of_rotation([]) == set()


def test_redis_unreachable_shows_no_notice_and_the_page_still_opens(create_session, shop, monkeypatch):  # noqa: F811
    failing("sandbox", "UPI")

    def down(*args, **kwargs):
        raise ConnectionError("redis down")

    monkeypatch.setattr(health.cache, "get_many", down)
    assert "data-degraded" not in methods_page(create_session, shop)[0]


def test_the_s2s_phone_check_reads_the_route_without_taking_the_probe(both, shop):  # noqa: F811
    # Step 1's phone check asks which acquirers a UPI payment may go to; it must not use up the
    # probe of an acquirer out of rotation, which belongs to the payment's own routing.
    from payments.services.s2s import s2s_customer_phone_check

    routed(shop, "UPI", "razorpay,cashfree")
    failing("razorpay", "UPI")
    s2s_customer_phone_check({"customerPhone": "9876543210"}, merchant=shop.merchant)
    assert health_out("razorpay", "UPI") is False  # the probe is still there for the payment
    assert health_out("razorpay", "UPI") is True
