"""S2S webhookUrl (issue 17; SDK 1.0.1 sends it per payment): checked as the merchant's own
webhook address is in production, stored on the payment, and every webhook of that payment (and
of its refunds) goes there instead of the merchant's address, signed with the merchant's secret.

An address that arrives in an API request never reaches loopback or private networks, in
staging too (issue 29): the tests whose receivers listen on loopback say so with the tests-only
setting WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE (`loopback_receivers`)."""
from __future__ import annotations

import json

import pytest

from gateway.core.signing import webhook_signature
from payments.models import Payment
from tests.payments.s2s.conftest import URL, assert_error
from tests.support.factories import make_merchant, signed_body
from tests.support.receiver import Receiver
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def loopback_receivers(settings):
    """The sanctioned way for a test to send a loopback webhookUrl: the tests-only setting,
    refused (and ignored) in production."""
    settings.WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE = True


@pytest.fixture
def merchant_site():
    with Receiver() as r:
        yield r


@pytest.fixture
def payments_site():
    with Receiver() as r:
        yield r


def create(api, tm, **fields):
    return api.post(URL, json.dumps(signed_body(tm, **fields)), content_type="application/json", **tm.headers)


def pay(api, link, vpa):
    return api.post("/sandbox/upi/pay", {"upiUri": link, "payerVpa": vpa}, format="json")


def deliver_all():
    for delivery in WebhookDelivery.objects.filter(status__in=WebhookDelivery.DUE_STATUSES):
        delivery_attempt_run(delivery.pk)


def test_the_payments_webhook_goes_to_its_own_address(api, loopback_receivers, merchant_site, payments_site):
    tm = make_merchant(webhook_url=merchant_site.url("/hooks"))
    created = create(api, tm, webhookUrl=payments_site.url("/order-7/hook")).json()
    assert Payment.objects.get(payment_id=created["paymentId"]).webhook_url == payments_site.url("/order-7/hook")
    pay(api, created["upiQrString"], "failure@sandbox")
    deliver_all()

    (request,) = payments_site.wait_for(1)
    assert request.path == "/order-7/hook" and request.json()["paymentId"] == created["paymentId"]
    timestamp_ms = int(request.headers["X-Service-Signature"].split(".", 1)[0])
    assert request.headers["X-Service-Signature"] == webhook_signature(tm.webhook_secret, request.body, timestamp_ms)
    assert merchant_site.requests == []
    delivery = WebhookDelivery.objects.get()
    assert delivery.attempt_rows.get().url == payments_site.url("/order-7/hook")


def test_a_merchant_without_an_address_still_gets_the_payments_own(api, loopback_receivers, payments_site):
    tm = make_merchant(webhook_url="")
    created = create(api, tm, webhookUrl=payments_site.url("/hook")).json()
    pay(api, created["upiQrString"], "failure@sandbox")
    deliver_all()
    assert payments_site.wait_for(1)[0].json()["status"] == "FAILED"


def test_other_payments_keep_the_merchants_address(api, loopback_receivers, merchant_site, payments_site):
    tm = make_merchant(webhook_url=merchant_site.url("/hooks"))
    create(api, tm, webhookUrl=payments_site.url("/hook"))
    plain = create(api, tm).json()
    pay(api, plain["upiQrString"], "failure@sandbox")
    deliver_all()
    assert merchant_site.wait_for(1)[0].json()["paymentId"] == plain["paymentId"]
    assert payments_site.requests == []


def test_the_refunds_of_that_payment_are_sent_there_too(api, loopback_receivers, merchant_site, payments_site):
    from refunds.services import refund_create

    from payments.services.transitions import payment_mark_succeeded

    tm = make_merchant(webhook_url=merchant_site.url("/hooks"))
    created = create(api, tm, webhookUrl=payments_site.url("/hook")).json()
    payment = Payment.objects.get(payment_id=created["paymentId"])
    payment_mark_succeeded(payment_id=payment.pk, bank_rrn="123456789012")
    refund = refund_create(merchant=tm.merchant, payment=payment, amount=payment.amount, reason="returned").refund
    from refunds.services import refund_mark_processed

    refund_mark_processed(refund_pk=refund.pk, bank_reference="RF000000000001")
    deliver_all()
    assert len(payments_site.wait_for(2)) == 2
    assert merchant_site.requests == []


@pytest.mark.parametrize("value, message", [
    (42, "must be a string"),
    ("ftp://shop.example/hook", "must be an http or https address"),
    ("https://user:pw@shop.example/hook", "must not carry credentials"),
    ("https://shop.example/" + "x" * 500, "at most 500"),
])
def test_a_bad_webhook_url_is_a_validation_error_and_nothing_is_written(api, value, message):
    tm = make_merchant()
    body = assert_error(create(api, tm, webhookUrl=value), "VALIDATION_ERROR", field="webhookUrl")
    assert message in body["errorMessage"]
    assert Payment.objects.count() == 0


def test_outside_staging_an_internal_address_is_refused_as_for_the_merchants_own(api, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    tm = make_merchant()
    body = assert_error(create(api, tm, webhookUrl="http://127.0.0.1:8000/hook"), "VALIDATION_ERROR",
                        field="webhookUrl")
    assert "public addresses" in body["errorMessage"]
    assert Payment.objects.count() == 0


INTERNAL = ["http://127.0.0.1:8000/hook", "http://localhost/hook", "http://10.0.0.5/hook",
            "http://169.254.169.254/latest/meta-data/", "http://[::1]/hook", "http://100.64.0.1/hook"]


@pytest.mark.parametrize("address", INTERNAL)
def test_in_staging_an_internal_address_from_a_request_is_refused_and_nothing_is_written(api, settings, address):
    """Finding 5 of issue 29: any holder of an API key made the staging worker POST to
    loopback and private addresses. Staff may still set such an address (staging allows them
    for the merchant's own); a request may not."""
    assert settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES and not settings.IS_PRODUCTION
    tm = make_merchant()
    body = assert_error(create(api, tm, webhookUrl=address), "VALIDATION_ERROR", field="webhookUrl")
    assert "public addresses" in body["errorMessage"]
    assert Payment.objects.count() == 0


def test_a_stored_internal_payment_address_is_refused_at_delivery_while_the_merchants_is_used(
        api, merchant_site, payments_site):
    """Checked again at every attempt: an address stored before (or a name that resolves to a
    private address only by the time of delivery) reaches nobody, while the address staff set
    for the merchant, on loopback in staging, still gets its webhooks."""
    tm = make_merchant(webhook_url=merchant_site.url("/hooks"))
    routed = create(api, tm).json()
    Payment.objects.filter(payment_id=routed["paymentId"]).update(webhook_url=payments_site.url("/hook"))
    plain = create(api, tm).json()
    for created in (routed, plain):
        pay(api, created["upiQrString"], "failure@sandbox")
    deliver_all()

    assert merchant_site.wait_for(1)[0].json()["paymentId"] == plain["paymentId"]
    assert payments_site.requests == []
    refused = WebhookDelivery.objects.get(url=payments_site.url("/hook")).attempt_rows.get()
    assert "address refused at delivery time" in refused.error and "public addresses" in refused.error


def test_the_tests_only_setting_changes_nothing_in_production(api, settings):
    settings.WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE = True
    settings.IS_PRODUCTION, settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True, False
    tm = make_merchant()
    assert_error(create(api, tm, webhookUrl="http://127.0.0.1:8000/hook"), "VALIDATION_ERROR", field="webhookUrl")
    assert Payment.objects.count() == 0
