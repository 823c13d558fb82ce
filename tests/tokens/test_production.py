"""Production: the tokenisation beta does not exist there. Settings are read at request time
(settings.IS_PRODUCTION), so override_settings switches a running process."""
from __future__ import annotations

import pytest
from django.test import Client, override_settings

from payments.models import Payment
from tests.payments.hosted.conftest import URL
from tests.support.factories import enter, future_expiry, pay_by_card, session_body, token_request
from tests.tokens.helpers import assert_error, delete_token, get_token, post_token
from tokens.models import CardConsent, Token

pytestmark = pytest.mark.django_db

production = override_settings(IS_PRODUCTION=True, GATEWAY_ENV="production")


def test_every_token_endpoint_answers_feature_not_available(api, shop, token_of, create_session):
    created = token_of(shop)
    consented = pay_by_card(Client(), create_session(shop))
    with production:
        for response in (
            post_token(api, shop, token_request(consented.payment_id)),
            get_token(api, shop, created["tokenId"]),
            delete_token(api, shop, created["tokenId"]),
            # Whoever asks, however: the feature is not there to authenticate against.
            post_token(api, shop, token_request(consented.payment_id), HTTP_X_API_KEY=None, HTTP_X_MERCHANT_ID=None),
            get_token(api, shop, "tok_doesnotexist0000000000", HTTP_X_API_KEY="wrong"),
            api.put(f"/api/v2/tokens/{created['tokenId']}", {}, format="json", **shop.headers),
        ):
            error = assert_error(response, 403, "FEATURE_NOT_AVAILABLE")
            assert "staging" in error["errorMessage"]
    assert Token.objects.get(token_id=created["tokenId"]).is_active
    assert Token.objects.count() == 1


def test_a_session_with_any_token_id_is_refused(api, shop, token_of):
    created = token_of(shop)
    with production:
        for token_id in (created["tokenId"], "tok_doesnotexist0000000000"):
            response = api.post(URL, session_body(shop, tokenId=token_id), format="json", HTTP_X_API_KEY=shop.api_key)
            error = assert_error(response, 403, "FEATURE_NOT_AVAILABLE", "tokenId")
            assert "production" in error["errorMessage"]
        # Without tokenId, sessions open as always.
        response = api.post(URL, session_body(shop), format="json", HTTP_X_API_KEY=shop.api_key)
        assert response.status_code == 200


def test_the_checkout_offers_no_consent_and_ignores_a_forged_one(client, create_session, shop):
    session = create_session(shop)
    enter(client, session)
    with production:
        page = client.get(f"/checkout/{session['paymentId']}").content.decode()
        assert 'name="save_card"' not in page
        client.post(f"/checkout/{session['paymentId']}/card", {
            "card_number": "4111111111111111", "card_expiry": future_expiry()[2], "card_cvv": "123",
            "save_card": "1"})
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert payment.status == "PROCESSING"
    assert not CardConsent.objects.exists()
    assert not payment.events.filter(detail__save_card=True).exists()


def test_a_token_session_opened_in_staging_cannot_pay_with_it_in_production(api, client, shop, token_of):
    created = token_of(shop)
    session = api.post(URL, session_body(shop, tokenId=created["tokenId"]), format="json",
                       HTTP_X_API_KEY=shop.api_key).json()
    enter(client, session)
    with production:
        page = client.get(f"/checkout/{session['paymentId']}").content.decode()
        assert "data-saved-card" not in page
        response = client.post(f"/checkout/{session['paymentId']}/card/saved", {"card_cvv": "123"})
        assert "no longer available" in response.content.decode()
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "PENDING"
