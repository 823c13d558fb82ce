"""GET and DELETE /api/v2/tokens/{tokenId}, and the vault's isolation between merchants on all
three token endpoints."""
from __future__ import annotations

from datetime import datetime

import pytest
from django.test import Client

from gateway.platform.models import AuditRecord
from tests.support.factories import pay_by_card, token_request
from tests.tokens.helpers import assert_error, delete_token, get_token, post_token
from tokens.models import SandboxNetworkToken, Token

pytestmark = pytest.mark.django_db


def test_get_answers_the_tokens_metadata_and_status(api, shop, token_of):
    created = token_of(shop)
    token = Token.objects.select_related("payment").get(token_id=created["tokenId"])
    response = get_token(api, shop, created["tokenId"])
    assert response.status_code == 200, response.content
    body = response.json()
    assert body == {**created, "status": "ACTIVE", "paymentId": token.payment.payment_id,
                    "consentTimestamp": int(token.consent_timestamp.timestamp())}
    assert token.network_reference not in response.content.decode()


def test_a_token_whose_card_has_expired_reads_expired(api, shop, token_of):
    created = token_of(shop)
    Token.objects.filter(token_id=created["tokenId"]).update(expiry_month=1, expiry_year=2020)
    body = get_token(api, shop, created["tokenId"]).json()
    assert body["status"] == "EXPIRED" and body["expiryYear"] == "2020"


def test_delete_deletes_for_good(api, shop, token_of):
    created = token_of(shop)
    token = Token.objects.get(token_id=created["tokenId"])
    reference = token.network_reference

    response = delete_token(api, shop, created["tokenId"])

    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"tokenId", "status", "deletedAt"}
    assert body["tokenId"] == created["tokenId"] and body["status"] == "DELETED"
    assert datetime.fromisoformat(body["deletedAt"].replace("Z", "+00:00"))
    token.refresh_from_db()
    assert token.status == "DELETED" and token.deleted_by == f"merchant {shop.code} (API)"
    # The vault forgets what could pay or identify the card beyond what a merchant may keep.
    assert token.network_reference == "" and token.expiry_month is None and token.expiry_year is None
    assert SandboxNetworkToken.objects.get(reference=reference).status == "DELETED"
    audit = AuditRecord.objects.get(action="token.delete")
    assert audit.actor is None and audit.actor_name == f"merchant {shop.code} (API)"
    assert audit.merchant == shop.merchant and audit.object_id == str(token.pk)
    assert audit.before["status"] == "ACTIVE" and audit.after["status"] == "DELETED"
    # Later reads and deletes: as if it never existed.
    assert_error(get_token(api, shop, created["tokenId"]), 404, "NOT_FOUND")
    assert_error(delete_token(api, shop, created["tokenId"]), 404, "NOT_FOUND")
    assert AuditRecord.objects.filter(action="token.delete").count() == 1


@pytest.mark.parametrize("token_id", ["tok_doesnotexist0000000000", "x", "tok_" + "a" * 60, "%20"])
def test_unknown_tokens_are_not_found(api, shop, token_id):
    assert_error(get_token(api, shop, token_id), 404, "NOT_FOUND")
    assert_error(delete_token(api, shop, token_id), 404, "NOT_FOUND")


def test_other_methods_are_not_allowed(api, shop, token_of):
    created = token_of(shop)
    assert_error(api.put(f"/api/v2/tokens/{created['tokenId']}", {}, format="json", **shop.headers),
                 405, "METHOD_NOT_ALLOWED")
    assert_error(api.get("/api/v2/tokens", **shop.headers), 405, "METHOD_NOT_ALLOWED")


def test_x_merchant_id_is_required_on_get_and_delete(api, shop, token_of):
    created = token_of(shop)
    assert_error(get_token(api, shop, created["tokenId"], HTTP_X_MERCHANT_ID=None), 401, "UNAUTHORIZED")
    assert_error(delete_token(api, shop, created["tokenId"], HTTP_X_MERCHANT_ID=None), 401, "UNAUTHORIZED")
    assert Token.objects.get(token_id=created["tokenId"]).is_active


# --- isolation ------------------------------------------------------------------------------

def test_another_merchants_token_answers_as_if_it_did_not_exist(api, shop, rival, token_of):
    theirs = token_of(rival)
    unknown_get = get_token(api, shop, "tok_doesnotexist0000000000").json()
    unknown_delete = delete_token(api, shop, "tok_doesnotexist0000000000").json()

    got = assert_error(get_token(api, shop, theirs["tokenId"]), 404, "NOT_FOUND")
    deleted = assert_error(delete_token(api, shop, theirs["tokenId"]), 404, "NOT_FOUND")

    assert got["errorMessage"] == unknown_get["errorMessage"]
    assert deleted["errorMessage"] == unknown_delete["errorMessage"]
    assert Token.objects.get(token_id=theirs["tokenId"]).is_active
    assert not AuditRecord.objects.filter(action="token.delete").exists()
    # Naming the owner in X-Merchant-Id with one's own key is no way around it.
    assert_error(get_token(api, shop, theirs["tokenId"], HTTP_X_MERCHANT_ID=rival.code), 401, "UNAUTHORIZED")
    assert get_token(api, rival, theirs["tokenId"]).status_code == 200


def test_a_token_cannot_be_created_from_another_merchants_payment_even_with_their_consent(
        api, shop, rival, create_session):
    theirs = pay_by_card(Client(), create_session(rival))
    assert_error(post_token(api, shop, token_request(theirs.payment_id)), 404, "NOT_FOUND")
    assert_error(post_token(api, shop, token_request(theirs.payment_id), HTTP_X_MERCHANT_ID=rival.code),
                 401, "UNAUTHORIZED")
    assert not Token.objects.exists()


def test_the_same_card_saved_with_two_merchants_makes_two_unrelated_tokens(api, shop, rival, token_of):
    mine, theirs = token_of(shop), token_of(rival)
    assert mine["tokenId"] != theirs["tokenId"]
    assert mine["lastFourDigits"] == theirs["lastFourDigits"] == "1111"
    a, b = Token.objects.get(token_id=mine["tokenId"]), Token.objects.get(token_id=theirs["tokenId"])
    assert a.network_reference != b.network_reference
    assert delete_token(api, shop, mine["tokenId"]).status_code == 200
    assert get_token(api, rival, theirs["tokenId"]).status_code == 200
