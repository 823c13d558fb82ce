"""POST /api/v2/tokens: the token of a consenting, authenticated card payment, and every request
that must not get one."""
from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from payments.models import Payment
from tests.support.factories import CONSENT_TEXT, MASTERCARD, enter, future_expiry, now, pay_by_card, token_request
from tests.tokens.helpers import assert_error, delete_token, post_token
from tokens.models import CardConsent, SandboxNetworkToken, Token
from tokens.services import TOKEN_CONSENT_WINDOW, card_consent_text

pytestmark = pytest.mark.django_db

CREATED_FIELDS = {"tokenId", "network", "lastFourDigits", "expiryMonth", "expiryYear", "issuer", "createdAt"}


@pytest.fixture
def consented(create_session, shop):
    """A SUCCESS card payment of `shop` during which the customer ticked save_card."""
    return pay_by_card(Client(), create_session(shop))


def test_a_consenting_card_payment_gets_a_token_with_exactly_the_interface_fields(api, shop, create_session):
    month, year, expiry = future_expiry()
    before = timezone.now().replace(microsecond=0)
    payment = pay_by_card(Client(), create_session(shop), number=MASTERCARD, expiry=expiry)
    consent = CardConsent.objects.get(payment=payment)
    assert consent.text == card_consent_text("Chai Point Stores")
    assert before <= consent.given_at <= timezone.now()
    assert (consent.expiry_month, consent.expiry_year) == (month, year)

    response = post_token(api, shop, token_request(payment.payment_id, timestamp=int(consent.given_at.timestamp())))

    assert response.status_code == 200, response.content
    assert "Idempotent-Replayed" not in response
    body = response.json()
    assert set(body) == CREATED_FIELDS
    token = Token.objects.get(token_id=body["tokenId"])
    assert re.fullmatch(r"tok_[A-Za-z0-9]{24}", body["tokenId"])
    assert body["network"] == "MASTERCARD" and body["lastFourDigits"] == "4444"
    assert (body["expiryMonth"], body["expiryYear"]) == (f"{month:02d}", str(year))
    assert body["issuer"] == "Sandbox Co-operative Bank"
    assert body["createdAt"].endswith("Z")
    created = datetime.fromisoformat(body["createdAt"].replace("Z", "+00:00"))
    assert created == token.created_at.replace(microsecond=0)
    # The vault: this merchant, this payment, the network's reference; the consent as sent.
    assert token.merchant == shop.merchant and token.payment == payment and token.is_active
    assert SandboxNetworkToken.objects.get(reference=token.network_reference).status == "ACTIVE"
    assert token.consent_text == CONSENT_TEXT
    # The expiry moved to the token: the consent keeps its text and time only.
    consent.refresh_from_db()
    assert consent.expiry_month is None and consent.expiry_year is None and consent.text


def test_asking_again_for_the_same_payment_returns_the_same_token(api, shop, consented):
    first = post_token(api, shop, token_request(consented.payment_id))
    again = post_token(api, shop, token_request(consented.payment_id, text="Another wording"))
    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Token.objects.filter(payment=consented).count() == 1
    assert SandboxNetworkToken.objects.filter(status="ACTIVE").count() == 1


def test_a_deleted_token_is_not_made_again_from_its_payment(api, shop, consented):
    token_id = post_token(api, shop, token_request(consented.payment_id)).json()["tokenId"]
    assert delete_token(api, shop, token_id).status_code == 200
    error = assert_error(post_token(api, shop, token_request(consented.payment_id)), 400, "VALIDATION_ERROR",
                         "paymentId")
    assert "deleted" in error["errorMessage"]


# --- the payment ----------------------------------------------------------------------------

def test_a_pending_payment_gets_no_token(api, shop, create_session):
    session = create_session(shop)
    error = assert_error(post_token(api, shop, token_request(session["paymentId"])), 400, "VALIDATION_ERROR",
                         "paymentId")
    assert "PENDING" in error["errorMessage"] and "successful" in error["errorMessage"]


def test_a_card_payment_still_waiting_for_its_otp_gets_no_token(api, shop, create_session):
    payment = pay_by_card(Client(), create_session(shop), otp=None)
    assert payment.status == "PROCESSING" and CardConsent.objects.filter(payment=payment).exists()
    assert_error(post_token(api, shop, token_request(payment.payment_id)), 400, "VALIDATION_ERROR", "paymentId")


def test_a_card_payment_that_failed_3ds_gets_no_token(api, shop, create_session):
    # The OTP is the additional authentication factor: a consent without it makes nothing.
    payment = pay_by_card(Client(), create_session(shop), otp="000000")
    # A failed attempt leaves the payment PENDING (CONTRACT.md, issue 19), once FAILED here.
    assert payment.status == "PENDING" and CardConsent.objects.filter(payment=payment).exists()
    error = assert_error(post_token(api, shop, token_request(payment.payment_id)), 400, "VALIDATION_ERROR",
                         "paymentId")
    assert "PENDING" in error["errorMessage"]


def test_a_declined_card_gets_no_token(api, shop, create_session):
    payment = pay_by_card(Client(), create_session(shop), number="4000000000000002", otp=None)
    assert payment.status == "PENDING"  # a failed attempt (issue 19); was FAILED
    assert_error(post_token(api, shop, token_request(payment.payment_id)), 400, "VALIDATION_ERROR", "paymentId")


def test_a_payment_not_made_by_card_gets_no_token(api, shop, create_session):
    session = create_session(shop)
    client = Client()
    enter(client, session)
    client.post(f"/checkout/{session['paymentId']}/netbanking", {"bank": "HDFC"})
    client.post(f"/sandbox/bank/{session['paymentId']}", {"decision": "approve"})
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "SUCCESS"
    error = assert_error(post_token(api, shop, token_request(session["paymentId"])), 400, "VALIDATION_ERROR",
                         "paymentId")
    assert "card" in error["errorMessage"]


def test_a_card_payment_without_the_customers_consent_gets_no_token(api, shop, create_session):
    payment = pay_by_card(Client(), create_session(shop), save_card=False)
    assert payment.status == "SUCCESS" and not CardConsent.objects.filter(payment=payment).exists()
    error = assert_error(post_token(api, shop, token_request(payment.payment_id)), 400, "VALIDATION_ERROR",
                         "paymentId")
    assert "did not consent" in error["errorMessage"]
    assert not Token.objects.exists() and not SandboxNetworkToken.objects.exists()


def test_an_unknown_payment_is_not_found(api, shop):
    error = assert_error(post_token(api, shop, token_request("pay_doesnotexist000000")), 404, "NOT_FOUND")
    assert error["errorMessage"].startswith("paymentId")


def test_another_merchants_payment_answers_as_if_it_did_not_exist(api, shop, rival, create_session):
    theirs = pay_by_card(Client(), create_session(rival))
    unknown = post_token(api, shop, token_request("pay_doesnotexist000000")).json()
    error = assert_error(post_token(api, shop, token_request(theirs.payment_id)), 404, "NOT_FOUND")
    assert error["errorMessage"] == unknown["errorMessage"]
    assert not Token.objects.exists()
    # Their own request still works.
    assert post_token(api, rival, token_request(theirs.payment_id)).status_code == 200


def test_a_consent_older_than_the_window_has_lapsed(api, shop, consented):
    Payment.objects.filter(pk=consented.pk).update(
        completed_at=timezone.now() - TOKEN_CONSENT_WINDOW - timedelta(minutes=1))
    error = assert_error(post_token(api, shop, token_request(consented.payment_id,
                                                             timestamp=int(consented.created_at.timestamp()))),
                         400, "VALIDATION_ERROR", "paymentId")
    assert "lapsed" in error["errorMessage"]


# --- the consent ----------------------------------------------------------------------------

@pytest.mark.parametrize("given", [False, "true", 1, None, ...])
def test_consent_given_must_be_the_boolean_true(api, shop, consented, given):
    body = token_request(consented.payment_id, given=given)
    assert_error(post_token(api, shop, body), 400, "VALIDATION_ERROR", "consent.consentGiven")
    assert not Token.objects.exists()


def test_consent_timestamp_in_the_future_beyond_the_clock_skew_is_refused(api, shop, consented, settings):
    skew = settings.REQUEST_CLOCK_SKEW_SECONDS
    error = assert_error(post_token(api, shop, token_request(consented.payment_id, timestamp=now() + skew + 5)),
                         400, "VALIDATION_ERROR", "consent.consentTimestamp")
    assert "future" in error["errorMessage"]
    # Within the skew it is accepted.
    assert post_token(api, shop, token_request(consented.payment_id, timestamp=now() + skew - 5)).status_code == 200


def test_consent_timestamp_before_the_payment_was_created_is_refused(api, shop, consented, settings):
    created = int(consented.created_at.timestamp())
    skew = settings.REQUEST_CLOCK_SKEW_SECONDS
    for timestamp in (created - skew - 5, 0, 1_000_000_000):
        error = assert_error(post_token(api, shop, token_request(consented.payment_id, timestamp=timestamp)),
                             400, "VALIDATION_ERROR", "consent.consentTimestamp")
        assert "before the payment" in error["errorMessage"]
    assert post_token(api, shop, token_request(consented.payment_id, timestamp=created)).status_code == 200


@pytest.mark.parametrize("timestamp", ["1767225600", 1767225600.5, True, -5, 10**12, ...])
def test_consent_timestamp_must_be_integer_unix_seconds(api, shop, consented, timestamp):
    body = token_request(consented.payment_id, timestamp=timestamp)
    assert_error(post_token(api, shop, body), 400, "VALIDATION_ERROR", "consent.consentTimestamp")


@pytest.mark.parametrize("text", ["", "   ", 42, ..., "x" * 1001])
def test_consent_text_is_required_and_bounded(api, shop, consented, text):
    assert_error(post_token(api, shop, token_request(consented.payment_id, text=text)), 400, "VALIDATION_ERROR",
                 "consent.consentText")


@pytest.mark.parametrize("body", [
    {"consent": {"consentGiven": True, "consentTimestamp": 1, "consentText": "x"}},
    {"paymentId": 12, "consent": {"consentGiven": True, "consentTimestamp": 1, "consentText": "x"}},
])
def test_payment_id_is_a_required_string(api, shop, body):
    assert_error(post_token(api, shop, body), 400, "VALIDATION_ERROR", "paymentId")


@pytest.mark.parametrize("consent", [None, "yes", [True]])
def test_consent_is_a_required_object(api, shop, consented, consent):
    body = {"paymentId": consented.payment_id}
    if consent is not None:
        body["consent"] = consent
    assert_error(post_token(api, shop, body), 400, "VALIDATION_ERROR", "consent")


def test_a_body_that_is_not_a_json_object_is_refused(api, shop):
    response = api.post("/api/v2/tokens", "[1, 2]", content_type="application/json", **shop.headers)
    assert_error(response, 400, "VALIDATION_ERROR", "body")
    response = api.post("/api/v2/tokens", "{not json", content_type="application/json", **shop.headers)
    assert_error(response, 400, "VALIDATION_ERROR", "body")


# --- who may ask ----------------------------------------------------------------------------

def test_x_merchant_id_is_required(api, shop, consented):
    error = assert_error(post_token(api, shop, token_request(consented.payment_id), HTTP_X_MERCHANT_ID=None),
                         401, "UNAUTHORIZED")
    assert "X-Merchant-Id" in error["errorMessage"]
    assert not Token.objects.exists()


def test_x_merchant_id_of_another_merchant_or_a_wrong_key_is_unauthorized(api, shop, rival, consented):
    assert_error(post_token(api, shop, token_request(consented.payment_id), HTTP_X_MERCHANT_ID=rival.code),
                 401, "UNAUTHORIZED")
    assert_error(post_token(api, shop, token_request(consented.payment_id), HTTP_X_API_KEY=rival.api_key),
                 401, "UNAUTHORIZED")
    assert_error(post_token(api, shop, token_request(consented.payment_id), HTTP_X_API_KEY="gwk_wrong" * 3),
                 401, "UNAUTHORIZED")
    assert not Token.objects.exists()


def test_token_responses_carry_the_platform_headers(api, shop, consented):
    response = post_token(api, shop, token_request(consented.payment_id))
    assert response.status_code == 200
    assert "X-RateLimit-Limit" in response and response["X-Trace-Id"]
