"""A payment link (issue 19) is a hosted payment like any other: its address opens the same
checkout, and once paid the merchant finds it by enquiry, hears of it by the hosted webhook,
refunds it and sees it in settlement. A customer pays one in a real browser."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.core import crypto
from gateway.console.settlement import settlement_rows
from payments.models import Payment, PaymentLink
from payments.services import hosted
from payments.services.links import LinkRequest, link_url, payment_link_cancel, payment_link_create
from tests.payments.hosted.test_checkout_methods import pay_by_card
from tests.support.factories import make_merchant
from tests.support.receiver import Receiver
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

pytestmark = pytest.mark.django_db


def a_link(tm, *, amount=249_950, expires_at=None) -> PaymentLink:
    request = LinkRequest(amount=amount, description="Invoice 1042: tailoring", customer_phone="9876543210",
                          expires_at=expires_at)
    return payment_link_create(merchant=tm.merchant, request=request, actor=None)


def path_of(link: PaymentLink) -> str:
    return "/pay/" + crypto.decrypt(link.token_encrypted)


def test_the_link_opens_the_same_checkout_and_keeps_the_token_out_of_the_address(client, shop):
    link = a_link(shop)
    response = client.get(path_of(link))
    assert response.status_code == 303 and response["Location"] == f"/checkout/{link.payment.payment_id}"
    page = client.get(response["Location"]).content.decode()
    assert "₹2,499.50" in page and "Invoice 1042: tailoring" in page and 'data-method="CARD"' in page
    assert crypto.decrypt(link.token_encrypted) not in page


def test_an_unknown_link_shows_nothing_and_counts_against_the_address(client, shop):
    for _ in range(20):
        assert client.get("/pay/not-a-real-token").status_code == 404
    assert client.get("/pay/not-a-real-token").status_code == 429
    # A real link is looked at first, so probing from the customer's address never locks them out.
    link = a_link(shop)
    assert client.get(path_of(link)).status_code == 303


@pytest.mark.parametrize(("finish", "state"), [("cancel", "cancelled"), ("expire", "expired")])
def test_a_finished_link_says_what_became_of_it(client, shop, finish, state):
    link = a_link(shop)
    if finish == "cancel":
        payment_link_cancel(link=link, actor=None)
    else:
        Payment.objects.filter(pk=link.payment_id).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get(path_of(link))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'data-link-state="{state}"' in html and "Nothing was charged" in html
    assert Payment.objects.get(pk=link.payment_id).status == ("FAILED" if finish == "cancel" else "EXPIRED")


def test_a_link_may_last_up_to_30_days(shop):
    now = timezone.now()
    link = a_link(shop, expires_at=now + timedelta(days=30))
    assert link.payment.expires_at == now + timedelta(days=30)
    from gateway.core.errors import ValidationError

    with pytest.raises(ValidationError) as caught:
        a_link(shop, expires_at=now + timedelta(days=30, minutes=5))
    assert caught.value.field == "expires_at"


def paid(link: PaymentLink) -> Payment:
    from payments.cards import CardInput

    payment = Payment.objects.select_related("merchant").get(pk=link.payment_id)
    payment = hosted.hosted_card_pay(payment=payment, card=CardInput("4111111111111111", 8, timezone.now().year + 3,
                                                                     "123"))
    return hosted.hosted_card_verify_otp(payment=payment, otp="123456")


def test_a_paid_link_is_a_payment_like_any_other_for_enquiry_refunds_and_settlement(api, shop):
    link = a_link(shop)
    payment = paid(link)
    txn = payment.merchant_txn_id

    enquiry = api.get("/api/v2/payments", {"merchantId": shop.code, "merchantTxnId": txn}, HTTP_X_API_KEY=shop.api_key)
    assert enquiry.status_code == 200, enquiry.content
    assert (enquiry.json()["status"], enquiry.json()["amount"], enquiry.json()["paymentMode"]) == (
        "SUCCESS", 249_950, "CARD")

    refund = api.post("/api/v2/refunds", {"merchantId": shop.code, "sabpaisaTxnId": payment.sabpaisa_txn_id,
                                          "refundAmount": 50_000}, format="json", HTTP_X_API_KEY=shop.api_key)
    assert refund.status_code == 200, refund.content

    day = timezone.localtime(payment.completed_at).date()
    rows = [row for row in settlement_rows(shop.merchant, day) if payment.sabpaisa_txn_id in row]
    assert rows and txn in rows[0]


@pytest.mark.browser
def test_a_customer_pays_a_payment_link_in_a_real_browser(checkout, live_server):
    """What a support person's link does: the customer opens it on a phone, pays by card with
    the 3-D Secure OTP, and lands on the link's page; the merchant gets one hosted webhook."""
    with Receiver() as merchant_backend:
        shop = make_merchant(name="Chai Point Stores", webhook_url=merchant_backend.url("/hooks"))
        link = a_link(shop)
        address = link_url(link)
        assert address.startswith(live_server.url + "/pay/")

        checkout.goto(address)
        checkout.locator("text=Invoice 1042: tailoring").wait_for()
        pay_by_card(checkout, "4111111111111111", otp="123456")

        checkout.locator('[data-link-state="paid"]').wait_for()
        payment = Payment.objects.get(pk=link.payment_id)
        # Back on the link's own page, named by its id (never its token: issue 29), with the signed result.
        assert checkout.url.startswith(f"{live_server.url}/pay/{payment.merchant_txn_id}?")
        assert "Payment received" in checkout.content()
        assert (payment.status, payment.payment_mode, payment.paid_amount) == ("SUCCESS", "CARD", 249_950)
        assert checkout.locator("text=" + payment.sabpaisa_txn_id).count() == 1

        # Opening the link again shows the same outcome: it cannot be paid twice.
        checkout.goto(address)
        checkout.locator('[data-link-state="paid"]').wait_for()

        delivery = WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id)
        delivery_attempt_run(delivery.pk)
        (request,) = merchant_backend.requests
        body = request.json()
        assert body["event"] == "payment.success" and body["merchant_txn_id"] == payment.merchant_txn_id
        assert body["txn_id"] == payment.sabpaisa_txn_id and body["paid_amount"] == 249_950


def test_a_link_open_for_days_says_days_left_not_hours(client, shop):
    link = a_link(shop, expires_at=timezone.now() + timedelta(days=7))
    client.get(path_of(link))
    html = client.get(f"/checkout/{link.payment.payment_id}").content.decode()
    assert "7 days</time>" in html
