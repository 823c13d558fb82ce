"""The consent journey in a real browser: the customer ticks "save this card" on the checkout,
passes the 3-D Secure OTP, and the merchant then makes the token; then the whole beta journey,
after which no table holds a card number or a CVV."""
from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from payments.models import Payment
from tests.payments.hosted.conftest import submit, wait_for_return
from tests.support.factories import VISA, future_expiry, token_request
from tests.tokens.helpers import assert_no_card_data_stored, delete_token, find_card_data, get_token, post_token
from tokens.models import CardConsent, Token
from tokens.services import card_consent_text

pytestmark = pytest.mark.browser


def fill_card(page, *, number: str, expiry: str, cvv: str) -> None:
    page.click("[data-method=CARD]")
    page.fill("input[name=card_number]", number)
    page.fill("input[name=card_expiry]", expiry)
    page.fill("input[name=card_cvv]", cvv)


def answer_otp(page, otp: str = "123456") -> None:
    page.fill("input[name=otp]", otp)
    page.locator("form:has(input[name=otp]) button[type=submit]").click()


def test_the_customer_consents_on_the_checkout_and_the_merchant_makes_the_token(
        checkout, start, merchant_site, shop, api):
    month, year, expiry = future_expiry()
    session = start()
    fill_card(checkout, number="4111 1111 1111 1111", expiry=expiry, cvv="739")
    consent_box = checkout.locator("input[name=save_card]")
    assert consent_box.is_visible() and not consent_box.is_checked()
    shown = checkout.locator("label[for=save_card] [data-consent-text]").inner_text()
    assert shown == card_consent_text("Chai Point Stores")
    consent_box.check()
    clicked_at = timezone.now()
    submit(checkout, "CARD")

    # The additional authentication factor: the same payment's 3-D Secure OTP.
    assert checkout.locator("input[name=otp]").is_visible()
    answer_otp(checkout)
    assert wait_for_return(checkout, merchant_site)["status"] == "SUCCESS"

    payment = Payment.objects.get(payment_id=session["paymentId"])
    consent = CardConsent.objects.get(payment=payment)
    assert consent.text == shown
    assert clicked_at - timedelta(seconds=5) <= consent.given_at <= timezone.now()
    assert (consent.expiry_month, consent.expiry_year) == (month, year)
    assert payment.events.get(to_status="PROCESSING").detail["save_card"] is True

    response = post_token(api, shop, token_request(payment.payment_id, timestamp=int(consent.given_at.timestamp()),
                                                   text=shown))
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["network"], body["lastFourDigits"], body["expiryMonth"], body["expiryYear"], body["issuer"]) == (
        "VISA", "1111", f"{month:02d}", str(year), "Sandbox Bank of India")
    assert_no_card_data_stored(cvvs=["739"])


def test_without_ticking_the_box_nothing_is_kept_for_a_token(checkout, start, merchant_site, shop, api):
    session = start()
    fill_card(checkout, number=VISA, expiry=future_expiry()[2], cvv="739")
    submit(checkout, "CARD")
    answer_otp(checkout)
    assert wait_for_return(checkout, merchant_site)["status"] == "SUCCESS"
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert not CardConsent.objects.filter(payment=payment).exists()
    assert post_token(api, shop, token_request(payment.payment_id)).status_code == 400


def test_no_table_or_log_holds_a_card_number_or_cvv_after_the_whole_beta_journey(
        checkout, start, merchant_site, shop, api, admin_client, caplog):
    """Consent in the browser, the token, a payment with it (CVV and OTP), a declined card,
    a typed-but-refused card, the token deleted by staff: then every table is read."""
    caplog.set_level(logging.DEBUG)
    cvvs = ["739", "482", "615", "358"]

    session = start()
    fill_card(checkout, number="5555-5555-5555-4444", expiry=future_expiry()[2], cvv=cvvs[0])
    checkout.check("input[name=save_card]")
    submit(checkout, "CARD")
    answer_otp(checkout)
    wait_for_return(checkout, merchant_site)
    created = post_token(api, shop, token_request(session["paymentId"])).json()

    paying = start(tokenId=created["tokenId"])
    checkout.click("[data-method=CARD]")
    checkout.fill("input[name=card_cvv]", cvvs[1])
    submit(checkout, "CARD")
    answer_otp(checkout)
    assert wait_for_return(checkout, merchant_site)["status"] == "SUCCESS"
    assert Payment.objects.get(payment_id=paying["paymentId"]).card_last4 == "4444"

    declined = start()
    fill_card(checkout, number="4000 0000 0000 0002", expiry=future_expiry()[2], cvv=cvvs[2])
    checkout.check("input[name=save_card]")
    submit(checkout, "CARD")
    # A declined card fails the attempt, not the payment (issue 19): the methods again.
    checkout.locator("[data-attempt=failed]").wait_for()
    assert Payment.objects.get(payment_id=declined["paymentId"]).status == "PENDING"

    refused = start()
    fill_card(checkout, number=VISA, expiry="01/20", cvv=cvvs[3])  # expired: the form refuses it
    submit(checkout, "CARD")
    assert "expired" in checkout.locator("#card_expiry-error").inner_text()  # refused before submitting

    token = Token.objects.get(token_id=created["tokenId"])
    admin_client.post("/admin/tokens/token/", {"action": "delete_tokens", "_selected_action": [token.pk]})
    assert get_token(api, shop, created["tokenId"]).status_code == 404
    assert delete_token(api, shop, created["tokenId"]).status_code == 404
    Client().get(f"{refused['checkoutUrl']}?clientSecret={refused['clientSecret']}")

    assert_no_card_data_stored(cvvs=cvvs)
    logged = "\n".join(record.getMessage() + (record.exc_text or "") for record in caplog.records)
    assert find_card_data(logged, cvvs=cvvs) == []
