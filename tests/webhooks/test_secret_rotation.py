"""Rotating a webhook secret without an outage (issue 18, item 8): during a grace period staff
choose, every webhook is signed with the new secret (X-Service-Signature) and the previous one
(X-Service-Signature-Previous); receivers holding either secret accept it, the previous secret
is encrypted at rest and forgotten after the grace, and the rotation is audited."""
import importlib.util
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from gateway.core import crypto
from gateway.core.errors import ValidationError
from gateway.platform.models import AuditRecord, Merchant
from gateway.platform.services import merchant_rotate_webhook_secret, secrets_reencrypt
from gateway.core.signing import webhook_signature
from tests.support.claims import through_a_claim
from tests.support.factories import make_merchant
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run, event_record
from webhooks.tasks import previous_webhook_secrets_forget

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "webhook_receiver.py"
DAY = 24 * 3600


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("webhook_receiver_example_rotation", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def merchant_servers(example, db):
    """Start the example receiver on loopback with a given secret; yields `start` and what each
    server's handler received."""
    servers, received = [], []

    def start(secret) -> str:
        server = example.make_server(secret, lambda event_id, payload: received.append((secret, event_id)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/webhook"

    yield start, received
    for server in servers:
        server.shutdown()
        server.server_close()


def send(merchant, txn="SPROT1") -> WebhookDelivery:
    with transaction.atomic():
        event = event_record(merchant=merchant, event_type="payment.success",
                             payload={"event": "payment.success", "txn_id": txn}, subject_id=txn)
    return delivery_attempt_run(event.deliveries.get().pk)


def verifies(secret, header, body) -> bool:
    timestamp = int(header.split(".", 1)[0])
    return header == webhook_signature(secret, body, timestamp)


def test_during_the_grace_both_secrets_sign_the_same_timestamp(hooked, receiver, admin_user):
    old = hooked.webhook_secret
    new = merchant_rotate_webhook_secret(merchant=hooked.merchant, grace_seconds=DAY, actor=admin_user)
    merchant = Merchant.objects.get(pk=hooked.merchant.pk)
    send(merchant)

    (request,) = receiver.requests
    current, previous = request.headers["X-Service-Signature"], request.headers["X-Service-Signature-Previous"]
    assert verifies(new, current, request.body) and not verifies(old, current, request.body)
    assert verifies(old, previous, request.body) and not verifies(new, previous, request.body)
    assert current.split(".")[0] == previous.split(".")[0]
    assert request.headers["X-SabPaisa-Signature"] == current  # the live name carries the new secret's


def test_a_receiver_still_holding_the_old_secret_and_one_holding_the_new_both_accept(merchant_servers, admin_user):
    start, received = merchant_servers
    tm = make_merchant()
    old = tm.webhook_secret
    new = merchant_rotate_webhook_secret(merchant=tm.merchant, grace_seconds=DAY, actor=admin_user)
    for secret, txn in ((old, "SPOLD"), (new, "SPNEW")):
        Merchant.objects.filter(pk=tm.merchant.pk).update(webhook_url=start(secret))
        delivery = send(Merchant.objects.get(pk=tm.merchant.pk), txn)
        assert delivery.status == WebhookDelivery.Status.DELIVERED, secret
    assert [secret for secret, _ in received] == [old, new]

    # A receiver holding neither secret still refuses it.
    Merchant.objects.filter(pk=tm.merchant.pk).update(webhook_url=start("whsec_forger"))
    delivery = send(Merchant.objects.get(pk=tm.merchant.pk), "SPFORGED")
    assert delivery.status == WebhookDelivery.Status.FAILED and delivery.attempt_rows.get().http_status == 401


def test_after_the_grace_only_the_new_secret_signs_and_the_previous_is_forgotten(merchant_servers, admin_user):
    start, received = merchant_servers
    tm = make_merchant()
    old = tm.webhook_secret
    merchant_rotate_webhook_secret(merchant=tm.merchant, grace_seconds=DAY, actor=admin_user)
    # The grace ends.
    Merchant.objects.filter(pk=tm.merchant.pk).update(
        previous_webhook_secret_expires_at=timezone.now() - timedelta(seconds=1), webhook_url=start(old))

    delivery = send(Merchant.objects.get(pk=tm.merchant.pk))
    assert delivery.status == WebhookDelivery.Status.FAILED  # the old secret no longer verifies anything
    assert delivery.attempt_rows.get().http_status == 401 and received == []

    assert previous_webhook_secrets_forget() == 1
    merchant = Merchant.objects.get(pk=tm.merchant.pk)
    assert merchant.previous_webhook_secret_encrypted == "" and merchant.previous_webhook_secret_expires_at is None


def test_the_previous_secret_is_encrypted_at_rest_and_re_encrypted_with_the_others(hooked, settings):
    old = hooked.webhook_secret
    merchant_rotate_webhook_secret(merchant=hooked.merchant, grace_seconds=3600)
    merchant = Merchant.objects.get(pk=hooked.merchant.pk)
    assert old not in merchant.previous_webhook_secret_encrypted
    assert crypto.decrypt(merchant.previous_webhook_secret_encrypted) == old == merchant.previous_webhook_secret()

    from cryptography.fernet import Fernet
    settings.GATEWAY_ENCRYPTION_KEYS = [Fernet.generate_key().decode(), *settings.GATEWAY_ENCRYPTION_KEYS]
    assert not crypto.is_current(merchant.previous_webhook_secret_encrypted)
    secrets_reencrypt()
    merchant.refresh_from_db()
    assert crypto.is_current(merchant.previous_webhook_secret_encrypted)
    assert merchant.previous_webhook_secret() == old


def test_a_rotation_without_grace_replaces_the_secret_at_once(hooked, receiver):
    merchant_rotate_webhook_secret(merchant=hooked.merchant, grace_seconds=3600)
    merchant_rotate_webhook_secret(merchant=hooked.merchant)  # 0: and ends the earlier grace too
    merchant = Merchant.objects.get(pk=hooked.merchant.pk)
    assert merchant.previous_webhook_secret_encrypted == "" and merchant.previous_webhook_secret() is None
    send(merchant)
    assert "X-Service-Signature-Previous" not in receiver.requests[0].headers


@pytest.mark.parametrize("grace", [-1, 7 * DAY + 1])
def test_a_grace_outside_0_to_7_days_is_refused_and_changes_nothing(hooked, grace):
    before = Merchant.objects.get(pk=hooked.merchant.pk).webhook_secret_encrypted
    with pytest.raises(ValidationError) as refused:
        merchant_rotate_webhook_secret(merchant=hooked.merchant, grace_seconds=grace)
    assert refused.value.field == "grace_seconds"
    assert Merchant.objects.get(pk=hooked.merchant.pk).webhook_secret_encrypted == before
    assert not AuditRecord.objects.filter(action="merchant.rotate_webhook_secret").exists()


def test_the_console_rotation_takes_a_grace_and_audits_it_without_secrets(admin_client, hooked):
    url = f"/admin/gateway/merchant/{hooked.merchant.pk}/rotate/webhook-secret/"
    page = admin_client.get(url)
    assert page.status_code == 200 and 'name="grace_hours"' in page.content.decode()

    response = admin_client.post(url, {"grace_hours": "24"})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    # Issue 29: never shown to staff; a second administrator approves, the merchant claims.
    new = through_a_claim(response, hooked.merchant)["webhookSecret"]
    merchant = Merchant.objects.get(pk=hooked.merchant.pk)
    assert new not in response.content.decode() and new == merchant.webhook_secret
    assert merchant.previous_webhook_secret() == hooked.webhook_secret
    audit = AuditRecord.objects.get(action="merchant.rotate_webhook_secret")
    assert audit.actor_name.startswith("administrators-") and audit.after["grace_seconds"] == DAY
    assert audit.after["previous_secret_expires_at"] == merchant.previous_webhook_secret_expires_at.isoformat()
    assert new not in str(audit.after) + str(audit.before) and hooked.webhook_secret not in str(audit.after)

    page = admin_client.get(f"/admin/gateway/merchant/{hooked.merchant.pk}/change/").content.decode()
    assert "X-Service-Signature-Previous" in page and "until" in page

    refused = admin_client.post(url, {"grace_hours": "169"})
    assert refused.status_code == 200 and b"errorlist" in refused.content
    assert Merchant.objects.get(pk=hooked.merchant.pk).webhook_secret == new
