"""The admin console: create and edit merchants, rotate each credential on a show-once page,
every staff action audited (who, what, when, before/after, never a secret), audit read-only."""
import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.platform.models import ApiKey, AuditRecord, Merchant
from tests.support.claims import through_a_claim

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.gateway.urls")]

INLINE = {"api_keys-TOTAL_FORMS": "0", "api_keys-INITIAL_FORMS": "0",
          "api_keys-MIN_NUM_FORMS": "0", "api_keys-MAX_NUM_FORMS": "0"}


def shown_credentials(response) -> dict:
    """What the console showed: never a credential (issue 29), only a code for a claim."""
    return dict(re.findall(r'data-credential="(\w+)">([^<]+)<', response.content.decode()))


def audit_dump() -> str:
    return json.dumps(list(AuditRecord.objects.values("actor_name", "action", "object_type", "object_id",
                                                      "before", "after")), default=str)


def rotate_url(merchant, kind):
    return f"/admin/gateway/merchant/{merchant.pk}/rotate/{kind}/"


def test_admin_index_and_merchant_pages_load(admin_client, acme):
    assert admin_client.get("/admin/").status_code == 200
    assert admin_client.get("/admin/gateway/merchant/").status_code == 200
    page = admin_client.get(f"/admin/gateway/merchant/{acme.merchant.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    for kind in ("api-key", "secret-key", "webhook-secret"):
        assert rotate_url(acme.merchant, kind) in html
    # Show once: the edit page never shows a credential.
    for secret in (acme.api_key, acme.secret_key, acme.webhook_secret):
        assert secret not in html


def test_admin_without_trailing_slash_redirects_to_the_console(client):
    response = client.get("/admin")
    assert response.status_code in (301, 302)
    assert response["Location"] == "/admin/"


def test_admin_login_page_works_with_append_slash_off(client):
    assert client.get("/admin/login/").status_code == 200
    response = client.get("/admin/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_creating_a_merchant_shows_its_credentials_once_and_audits_it(admin_client, api, admin_user):
    response = admin_client.post("/admin/gateway/merchant/add/", {
        "code": "ADMIN1", "name": "Admin Store", "is_active": "on", "s2s_enabled": "on",
        "webhook_url": "https://admin1.example/hook", "rate_limit": "9", **INLINE})
    assert response.status_code == 200, response.content[:2000]
    assert "no-store" in response["Cache-Control"]
    assert shown_credentials(response) == {}  # never to staff: through a claim (gateway.platform.claims)
    creds = through_a_claim(response, Merchant.objects.get(code="ADMIN1"))
    assert set(creds) == {"merchantId", "apiKey", "secretKey", "webhookSecret"}

    merchant = Merchant.objects.get(code="ADMIN1")
    assert (merchant.s2s_enabled, merchant.rate_limit, merchant.webhook_url) == (True, 9, "https://admin1.example/hook")
    assert merchant.secret_key == creds["secretKey"]
    assert api.get("/t/whoami", HTTP_X_API_KEY=creds["apiKey"]).json() == {"merchantId": "ADMIN1"}

    record = AuditRecord.objects.get(merchant=merchant, action="merchant.create")
    assert record.actor == admin_user and record.actor_name == admin_user.username
    assert record.created_at and record.after["rate_limit"] == 9
    dump = audit_dump()
    for secret in (creds["apiKey"], creds["secretKey"], creds["webhookSecret"]):
        assert secret not in dump


def test_creating_a_merchant_with_a_bad_webhook_address_shows_the_form_error(admin_client, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    response = admin_client.post("/admin/gateway/merchant/add/", {
        "code": "ADMIN2", "name": "Bad Hook", "is_active": "on", "webhook_url": "http://127.0.0.1/hook", **INLINE})
    assert response.status_code == 200
    assert b"errorlist" in response.content
    assert not Merchant.objects.filter(code="ADMIN2").exists()
    assert not AuditRecord.objects.filter(action="merchant.create").exists()


def test_editing_a_merchant_is_audited_with_before_and_after(admin_client, acme, admin_user):
    url = f"/admin/gateway/merchant/{acme.merchant.pk}/change/"
    response = admin_client.post(url, {
        "name": "Acme Renamed", "is_active": "on", "s2s_enabled": "",
        "webhook_url": "https://acme.example/new-hook", "rate_limit": "3", **INLINE,
        "api_keys-TOTAL_FORMS": "1", "api_keys-INITIAL_FORMS": "1",
        "api_keys-0-id": ApiKey.objects.get(merchant=acme.merchant).pk, "api_keys-0-merchant": acme.merchant.pk})
    assert response.status_code == 302, response.content[:3000]
    merchant = Merchant.objects.get(pk=acme.merchant.pk)
    assert (merchant.name, merchant.s2s_enabled, merchant.rate_limit, merchant.webhook_url) == (
        "Acme Renamed", False, 3, "https://acme.example/new-hook")
    record = AuditRecord.objects.get(merchant=merchant, action="merchant.update")
    assert record.actor == admin_user
    assert record.before["name"] == "Merchant ACME" and record.after["name"] == "Acme Renamed"
    assert record.before["s2s_enabled"] is True and record.after["s2s_enabled"] is False
    assert record.before["rate_limit"] == 1000 and record.after["rate_limit"] == 3
    assert record.after["webhook_url"] == "https://acme.example/new-hook"
    assert acme.secret_key not in audit_dump()


def test_rotate_api_key_asks_for_a_grace_period_then_shows_the_new_key_once(admin_client, api, acme):
    form = admin_client.get(rotate_url(acme.merchant, "api-key"))
    assert form.status_code == 200 and b"grace_hours" in form.content
    # A GET changes nothing.
    assert ApiKey.objects.filter(merchant=acme.merchant).count() == 1

    response = admin_client.post(rotate_url(acme.merchant, "api-key"), {"grace_hours": "2"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert shown_credentials(response) == {}
    new_key = through_a_claim(response, acme.merchant)["apiKey"]
    assert new_key != acme.api_key

    # Both keys work during the grace period, which ends when staff said.
    assert api.get("/t/whoami", HTTP_X_API_KEY=new_key).status_code == 200
    assert api.get("/t/whoami", HTTP_X_API_KEY=acme.api_key).status_code == 200
    old = ApiKey.objects.get(prefix=acme.api_key[:ApiKey.PREFIX_LENGTH])
    assert old.expires_at == pytest.approx(timezone.now() + timedelta(hours=2), abs=timedelta(minutes=1))

    record = AuditRecord.objects.get(merchant=acme.merchant, action="merchant.rotate_api_key")
    assert record.actor_name.startswith("administrators-")  # the second administrator, who approved
    assert new_key not in audit_dump() and acme.api_key not in audit_dump()

    # Show once: the merchant page does not show the key afterwards.
    page = admin_client.get(f"/admin/gateway/merchant/{acme.merchant.pk}/change/")
    assert new_key not in page.content.decode()


def test_rotate_api_key_with_no_grace_revokes_the_old_key(admin_client, api, acme):
    response = admin_client.post(rotate_url(acme.merchant, "api-key"), {"grace_hours": "0"})
    new_key = through_a_claim(response, acme.merchant)["apiKey"]
    assert api.get("/t/whoami", HTTP_X_API_KEY=acme.api_key).status_code == 401
    assert api.get("/t/whoami", HTTP_X_API_KEY=new_key).status_code == 200


def test_rotate_api_key_refuses_a_bad_grace_period(admin_client, acme):
    response = admin_client.post(rotate_url(acme.merchant, "api-key"), {"grace_hours": "-1"})
    assert response.status_code == 200 and b"errorlist" in response.content
    assert ApiKey.objects.filter(merchant=acme.merchant).count() == 1


@pytest.mark.parametrize("kind, field, attribute", [
    ("secret-key", "secretKey", "secret_key"),
    ("webhook-secret", "webhookSecret", "webhook_secret"),
])
def test_rotating_a_secret_shows_it_once_and_audits_without_it(admin_client, acme, kind, field, attribute):
    old = getattr(acme, attribute)
    assert admin_client.get(rotate_url(acme.merchant, kind)).status_code == 200
    assert getattr(Merchant.objects.get(pk=acme.merchant.pk), attribute) == old  # GET changes nothing

    response = admin_client.post(rotate_url(acme.merchant, kind), {})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert getattr(Merchant.objects.get(pk=acme.merchant.pk), attribute) == old  # nothing until approved
    new = through_a_claim(response, acme.merchant)[field]
    assert new != old
    assert getattr(Merchant.objects.get(pk=acme.merchant.pk), attribute) == new
    assert AuditRecord.objects.filter(merchant=acme.merchant, action=f"merchant.rotate_{attribute}").count() == 1
    dump = audit_dump()
    assert new not in dump and old not in dump


def test_rotation_of_an_unknown_credential_is_not_found(admin_client, acme):
    response = admin_client.post(rotate_url(acme.merchant, "password"), {})
    assert response.status_code == 404
    assert AuditRecord.objects.filter(action__startswith="merchant.rotate").count() == 0


def test_rotation_needs_a_logged_in_staff_user(client, acme):
    response = client.post(rotate_url(acme.merchant, "secret-key"), {})
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert Merchant.objects.get(pk=acme.merchant.pk).secret_key == acme.secret_key


def test_rotation_needs_the_change_permission(client, acme, django_user_model):
    viewer = django_user_model.objects.create_user("viewer", password="pw-viewer-123", is_staff=True)
    client.force_login(viewer)
    response = client.post(rotate_url(acme.merchant, "secret-key"), {})
    # A person reads the console: an HTML 403 page naming the permission, not the API's JSON.
    assert response.status_code == 403 and response["Content-Type"].startswith("text/html")
    assert b"gateway.change_merchant" in response.content
    assert Merchant.objects.get(pk=acme.merchant.pk).secret_key == acme.secret_key


def test_rotation_is_csrf_protected(acme, admin_user):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = client.post(rotate_url(acme.merchant, "secret-key"), {})
    assert response.status_code in (400, 403)
    assert Merchant.objects.get(pk=acme.merchant.pk).secret_key == acme.secret_key


def test_merchants_cannot_be_deleted_only_deactivated(admin_client, acme):
    """Payments, refunds and audit records hang off a merchant: deleting one would erase
    history, so the console offers deactivation instead."""
    response = admin_client.post(f"/admin/gateway/merchant/{acme.merchant.pk}/delete/", {"post": "yes"})
    assert response.status_code in (401, 403)
    assert Merchant.objects.filter(pk=acme.merchant.pk).exists()


def test_audit_records_are_read_only(admin_client, acme):
    record = AuditRecord.objects.get(merchant=acme.merchant, action="merchant.create")
    assert admin_client.get("/admin/gateway/auditrecord/").status_code == 200
    page = admin_client.get(f"/admin/gateway/auditrecord/{record.pk}/change/")
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert admin_client.get("/admin/gateway/auditrecord/add/").status_code in (401, 403)
    admin_client.post(f"/admin/gateway/auditrecord/{record.pk}/change/", {"action": "forged"})
    admin_client.post(f"/admin/gateway/auditrecord/{record.pk}/delete/", {"post": "yes"})
    record.refresh_from_db()
    assert record.action == "merchant.create"
