"""Support staff read tokens' metadata in the admin console and delete tokens through the token
service, audited; nobody edits a token's fields."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User

from gateway.platform.models import AuditRecord
from tests.tokens.helpers import get_token
from tokens.models import SandboxNetworkToken, Token

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/tokens/token/"


def staff(client, username, *codenames):
    user = User.objects.create_user(username, password="pw-not-used", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="tokens", codename__in=codenames))
    client.force_login(user)
    return user


@pytest.fixture
def token(shop, token_of):
    return Token.objects.select_related("payment").get(token_id=token_of(shop)["tokenId"])


def test_support_staff_see_a_tokens_metadata_but_never_its_network_reference(client, token):
    staff(client, "support", "view_token")
    listing = client.get(CHANGELIST).content.decode()
    assert token.token_id in listing and "1111" in listing and "ACTIVE" in listing
    detail = client.get(f"{CHANGELIST}{token.pk}/change/")
    assert detail.status_code == 200
    html = detail.content.decode()
    assert token.payment.payment_id in html and "Sandbox Bank of India" in html
    assert token.network_reference not in html
    assert "Save this card with Chai Point Stores" in html  # the consent the customer gave


def test_nobody_edits_or_raw_deletes_a_token(admin_client, token):
    admin_client.post(f"{CHANGELIST}{token.pk}/change/", {"status": "DELETED", "last4": "0000"})
    admin_client.post(f"{CHANGELIST}{token.pk}/delete/", {"post": "yes"})
    token.refresh_from_db()
    assert token.status == "ACTIVE" and token.last4 == "1111"
    assert admin_client.get(f"{CHANGELIST}add/").status_code in (401, 403)


def test_staff_allowed_to_revoke_delete_through_the_service_and_are_audited(client, api, shop, token):
    user = staff(client, "trust-and-safety", "view_token", "revoke_token")
    assert "delete_tokens" in client.get(CHANGELIST).content.decode()

    response = client.post(CHANGELIST, {"action": "delete_tokens", "_selected_action": [token.pk]})

    assert response.status_code == 302
    token.refresh_from_db()
    assert token.status == "DELETED" and token.deleted_by == "staff trust-and-safety"
    assert token.network_reference == "" and token.expiry_month is None
    assert not SandboxNetworkToken.objects.filter(status="ACTIVE").exists()
    audit = AuditRecord.objects.get(action="token.delete")
    assert audit.actor == user and audit.merchant == shop.merchant
    assert audit.before["tokenId"] == token.token_id and audit.after["status"] == "DELETED"
    assert "network_reference" not in str(audit.before) + str(audit.after)
    # The merchant's vault no longer has it.
    assert get_token(api, shop, token.token_id).status_code == 404

    # Deleting it again changes nothing and audits nothing more.
    client.post(CHANGELIST, {"action": "delete_tokens", "_selected_action": [token.pk]})
    assert AuditRecord.objects.filter(action="token.delete").count() == 1


def test_staff_without_the_permission_cannot_delete(client, token):
    staff(client, "support", "view_token")
    assert "delete_tokens" not in client.get(CHANGELIST).content.decode()
    client.post(CHANGELIST, {"action": "delete_tokens", "_selected_action": [token.pk]})
    token.refresh_from_db()
    assert token.is_active
    assert not AuditRecord.objects.filter(action="token.delete").exists()


def test_the_search_finds_a_token_by_each_identifier_through_indexes(client, shop, token):
    """Exact identifiers only, each an index on the tokens table: with sequential scans
    forbidden the plan reads no whole table, and a part of an identifier finds nothing."""
    from tests.console.test_search import admin_search_through_indexes

    staff(client, "support", "view_token")
    terms = {"tokenId": token.token_id, "paymentId": token.payment.payment_id,
             "sabpaisaTxnId": token.payment.sabpaisa_txn_id, "sabpaisaTxnId in lower case":
             token.payment.sabpaisa_txn_id.lower(), "merchant code": shop.merchant.code}
    for name, term in terms.items():
        assert admin_search_through_indexes(Token, f" {term} ") == [token], name
        assert token.token_id in client.get(CHANGELIST, {"q": term}).content.decode(), name
    assert admin_search_through_indexes(Token, token.token_id[:8]) == []
    assert token.token_id not in client.get(CHANGELIST, {"q": token.token_id[:8]}).content.decode()
