"""Roles are Django groups the migration creates (gateway/platform/roles.py); every console page and
action checks its permission, so each role can do exactly what docs/console.md says."""
from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission
from django.core.management.sql import emit_post_migrate_signal
from django.utils import timezone

from gateway.platform import roles
from gateway.platform.models import AuditRecord, Merchant, CredentialClaim
from refunds.models import Refund
from tests.console.conftest import ROLES
from tests.support.factories import story_payment
from tokens.models import Token
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db


def permissions_of(role: str) -> set[str]:
    return {f"{p.content_type.app_label}.{p.codename}"
            for p in Group.objects.get(name=role).permissions.select_related("content_type")}


def test_the_migration_made_the_three_groups_with_exactly_their_permissions():
    assert set(Group.objects.values_list("name", flat=True)) >= set(ROLES)
    for role in ROLES:
        assert permissions_of(role) == set(roles.ROLES[role]), role
    assert roles.roles_sync() == {}  # every permission a role names exists


def test_what_separates_the_roles():
    support, finance, administrators = (permissions_of(role) for role in ROLES)
    assert finance - support == {"refunds.initiate_refund", "payments.export_settlement",
                                 "payments.add_paymentlink", "payments.cancel_paymentlink",
                                 "refunds.change_reconexception", "refunds.add_bankstatement",
                                 "refunds.answer_dispute"}
    assert administrators - support == {"gateway.add_merchant", "gateway.change_merchant",
                                        # a merchant's acquirer routes, held with its other settings
                                        "payments.add_acquirerroute", "payments.change_acquirerroute",
                                        "payments.delete_acquirerroute"}
    assert not support & {"refunds.initiate_refund", "payments.export_settlement", "gateway.change_merchant"}
    assert not administrators & {"refunds.initiate_refund", "payments.export_settlement", "refunds.answer_dispute"}


def test_support_can_read_every_page_of_the_console():
    """A model registered in the admin later must be added to roles.READ, or this fails."""
    support = permissions_of("support")
    for model in admin.site._registry:
        if model._meta.app_label == "auth":
            continue  # staff accounts are managed by superusers only
        assert f"{model._meta.app_label}.view_{model._meta.model_name}" in support, model


def test_a_hand_edited_role_group_is_put_back_by_the_next_sync():
    group = Group.objects.get(name="support")
    group.permissions.add(Permission.objects.get(content_type__app_label="refunds", codename="initiate_refund"))
    group.permissions.remove(Permission.objects.get(content_type__app_label="payments", codename="view_payment"))
    roles.roles_sync()
    assert permissions_of("support") == set(roles.ROLES["support"])


def test_a_permission_created_after_the_migration_reaches_its_groups_on_migrate():
    """The tokens app is built in parallel: its permission may appear in a later migration.
    The post_migrate receiver assigns it without a new migration of ours."""
    Permission.objects.filter(content_type__app_label="tokens", codename="revoke_token").delete()
    assert roles.roles_sync() == {role: ["tokens.revoke_token"] for role in ROLES}
    assert "tokens.revoke_token" not in permissions_of("support")

    create_permissions(apps.get_app_config("tokens"), verbosity=0)  # what `migrate` does for a new one
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")

    for role in ROLES:
        assert "tokens.revoke_token" in permissions_of(role)


# --- every role on every action, through the real pages ----------------------------------------

@pytest.fixture
def world(shop, receiver, as_role):
    """A paid payment with a delivered webhook, a card token, and a client per role."""
    payment = story_payment(shop, receiver=receiver)
    token = Token.objects.create(
        merchant=shop.merchant, payment=payment, network="VISA", last4="1111", expiry_month=8,
        expiry_year=timezone.now().year + 3, network_reference="sbx_ref_console", issuer="Sandbox Bank",
        consent_timestamp=timezone.now(), consent_text="I agree to save my card.")
    return {"payment": payment, "token": token, "merchant": shop.merchant,
            "delivery": WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id),
            "clients": {role: as_role(role) for role in ROLES}}


def refund(client, world):
    url = f"/admin/refunds/refund/initiate/{world['payment'].pk}/"
    page = client.get(url)
    if page.status_code != 200:
        return page.status_code, Refund.objects.exists()
    refund_id = re.search(rb'name="refund_id" value="([^"]+)"', page.content).group(1).decode()
    response = client.post(url, {"amount": "10", "reason": "role test", "refund_id": refund_id, "confirmed": "True"})
    return response.status_code, Refund.objects.exists()


def rotate_key(client, world):
    # Issue 29: asking for a rotation (a second administrator approves it, gateway.platform.claims).
    response = client.post(f"/admin/gateway/merchant/{world['merchant'].pk}/rotate/secret-key/", {})
    return response.status_code, CredentialClaim.objects.filter(merchant=world["merchant"],
                                                                purpose="secret-key").exists()


def rotate_api_key(client, world):
    response = client.post(f"/admin/gateway/merchant/{world['merchant'].pk}/rotate/api-key/", {"grace_hours": 0})
    return response.status_code, CredentialClaim.objects.filter(merchant=world["merchant"], purpose="api-key").exists()


def edit_merchant(client, world):
    merchant = world["merchant"]
    response = client.post(f"/admin/gateway/merchant/{merchant.pk}/change/", {
        "name": "Renamed", "is_active": "on", "s2s_enabled": "on", "webhook_url": merchant.webhook_url,
        "rate_limit": "10", "api_keys-TOTAL_FORMS": "0", "api_keys-INITIAL_FORMS": "0",
        "api_keys-MIN_NUM_FORMS": "0", "api_keys-MAX_NUM_FORMS": "0"})
    return response.status_code, Merchant.objects.get(pk=merchant.pk).name == "Renamed"


def add_merchant(client, world):
    response = client.post("/admin/gateway/merchant/add/", {
        "code": "NEWSHOP", "name": "New Shop", "is_active": "on", "webhook_url": "", "rate_limit": "",
        "api_keys-TOTAL_FORMS": "0", "api_keys-INITIAL_FORMS": "0", "api_keys-MIN_NUM_FORMS": "0",
        "api_keys-MAX_NUM_FORMS": "0"})
    return response.status_code, Merchant.objects.filter(code="NEWSHOP").exists()


def export(client, world):
    today = timezone.localdate()
    response = client.post("/admin/console/settlement-export/",
                           {"merchant": world["merchant"].code, "date": today.isoformat()})
    return response.status_code, response.get("Content-Type", "").startswith("text/csv")


def resend_from_payment_page(client, world):
    response = client.post(f"/admin/payments/payment/{world['payment'].pk}/resend-webhook/{world['delivery'].pk}/")
    return response.status_code, AuditRecord.objects.filter(action="webhook.resend").exists()


def resend_from_delivery_log(client, world):
    response = client.post(f"/admin/webhooks/webhookdelivery/{world['delivery'].pk}/resend/")
    return response.status_code, AuditRecord.objects.filter(action="webhook.resend").exists()


def send_test_event(client, world):
    response = client.post("/admin/webhooks/webhookdelivery/send-test/", {"merchant": world["merchant"].pk})
    return response.status_code, AuditRecord.objects.filter(action="webhook.test_send").exists()


def delete_token(client, world):
    response = client.post("/admin/tokens/token/", {"action": "delete_tokens",
                                                    "_selected_action": [world["token"].pk]})
    return response.status_code, Token.objects.get(pk=world["token"].pk).status == Token.Status.DELETED


ACTIONS = {
    "refund": (refund, {"finance"}),
    "rotate secret key": (rotate_key, {"administrators"}),
    "rotate API key": (rotate_api_key, {"administrators"}),
    "edit merchant": (edit_merchant, {"administrators"}),
    "add merchant": (add_merchant, {"administrators"}),
    "settlement export": (export, {"finance"}),
    "resend webhook (payment page)": (resend_from_payment_page, set(ROLES)),
    "resend webhook (delivery log)": (resend_from_delivery_log, set(ROLES)),
    "send test event": (send_test_event, set(ROLES)),
    "delete card token": (delete_token, set(ROLES)),
}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", ACTIONS)
def test_each_role_can_do_exactly_its_actions(world, role, action):
    do, allowed_roles = ACTIONS[action]
    status, done = do(world["clients"][role], world)
    if role in allowed_roles:
        assert done, f"{role} should be able to {action} (HTTP {status})"
        assert status in (200, 302)
    else:
        assert not done, f"{role} must not be able to {action}"
        assert status == 403, f"{role} {action}: HTTP {status}"


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("page", ["/admin/", "/admin/payments/payment/", "/admin/console/dashboard/",
                                  "/admin/refunds/refund/", "/admin/webhooks/webhookdelivery/",
                                  "/admin/webhooks/webhookevent/", "/admin/tokens/token/",
                                  "/admin/gateway/merchant/", "/admin/gateway/auditrecord/"])
def test_every_role_reads_every_page(world, role, page):
    assert world["clients"][role].get(page).status_code == 200


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_a_payment_delivery_and_merchant(world, role):
    client = world["clients"][role]
    assert client.get(f"/admin/payments/payment/{world['payment'].pk}/change/").status_code == 200
    assert client.get(f"/admin/webhooks/webhookdelivery/{world['delivery'].pk}/change/").status_code == 200
    assert client.get(f"/admin/gateway/merchant/{world['merchant'].pk}/change/").status_code == 200


def test_support_is_refused_with_a_page_that_says_which_role_it_needs(world):
    response = world["clients"]["support"].get(f"/admin/refunds/refund/initiate/{world['payment'].pk}/")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "refunds.initiate_refund" in html and "finance" in html
    assert "Your groups: <strong>support</strong>" in html


def test_support_sees_no_rotate_buttons_and_administrators_do(world):
    url = f"/admin/gateway/merchant/{world['merchant'].pk}/change/"
    assert "/rotate/" not in world["clients"]["support"].get(url).content.decode()
    assert "/rotate/" in world["clients"]["administrators"].get(url).content.decode()


def test_staff_in_no_group_see_nothing(world, as_role):
    nobody = as_role(None)
    assert nobody.get("/admin/payments/payment/").status_code == 403
    assert nobody.get(f"/admin/payments/payment/{world['payment'].pk}/change/").status_code == 403
    assert nobody.get("/admin/console/dashboard/").status_code == 403


def test_changes_to_who_holds_a_role_are_audited(admin_client, world, django_user_model):
    user = django_user_model.objects.create_user("new-hire", password="pw-new-hire-1", is_staff=True)
    response = admin_client.post(f"/admin/auth/user/{user.pk}/change/", {
        "username": "new-hire", "is_active": "on", "is_staff": "on",
        "groups": [Group.objects.get(name="finance").pk], "date_joined_0": "2024-01-01",
        "date_joined_1": "10:00:00", "initial-date_joined_0": "2024-01-01", "initial-date_joined_1": "10:00:00"})
    assert response.status_code == 302, response.content.decode()[:3000]
    record = AuditRecord.objects.get(action="staff_user.update", object_id=str(user.pk))
    assert record.before["groups"] == [] and record.after["groups"] == ["finance"]
    assert record.actor_name == "admin"
    assert user.password not in str(record.before) + str(record.after)  # never the password hash
