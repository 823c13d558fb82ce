"""The staging webhook inbox: the gateway's own address that receives a merchant's webhooks,
checks their signatures with the merchant's secret and shows each delivery."""
import io
import json
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from gateway.platform.models import AuditRecord, Merchant
from gateway.core.signing import webhook_signature
from tests.support.factories import make_merchant
from webhooks.inbox import inbox_for_merchant, inbox_path, merchant_point_to_inbox, signature_check
from webhooks.models import WebhookDelivery, WebhookInboxMessage
from webhooks.services import delivery_attempt_run, webhook_test_send

BODY = b'{"event":"payment.success","sabpaisaTxnId":"T1","amount":49900}'


def signed_headers(secret: str, body: bytes = BODY, *, at_ms: int | None = None) -> dict:
    at_ms = int(time.time() * 1000) if at_ms is None else at_ms
    return {"HTTP_X_SERVICE_SIGNATURE": webhook_signature(secret, body, at_ms),
            "HTTP_X_SERVICE_EVENT_ID": "evt_1", "HTTP_X_SERVICE_EVENT_TYPE": "payment.success"}


def post(client, merchant, body=BODY, **headers):
    path = inbox_path(inbox_for_merchant(merchant.merchant))
    return client.post(path, body, content_type="application/json", **headers)


def test_a_correctly_signed_webhook_is_kept_verified_and_answered_200(client, db):
    m = make_merchant()
    response = post(client, m, **signed_headers(m.webhook_secret))
    assert response.status_code == 200, response.content
    message = WebhookInboxMessage.objects.get()
    assert message.verified and message.event_id == "evt_1" and message.event_type == "payment.success"
    assert message.body == BODY.decode()
    assert message.headers["X-Service-Signature"].endswith("=")


@pytest.mark.parametrize("headers, reason", [
    ({}, "no X-Service-Signature header"),
    ({"HTTP_X_SERVICE_SIGNATURE": "nonsense"}, "malformed X-Service-Signature"),
    ({"HTTP_X_SERVICE_SIGNATURE": "1700000000000.abc="}, "beyond the 300 s"),
], ids=["missing", "malformed", "stale"])
def test_an_unverifiable_webhook_is_refused_401_counted_and_not_kept(client, db, headers, reason):
    m = make_merchant()
    response = post(client, m, **headers)
    assert response.status_code == 401
    assert response.json()["errorCode"] == "INVALID_SIGNATURE"
    assert reason in response.json()["errorMessage"]
    assert not WebhookInboxMessage.objects.exists()
    inbox = inbox_for_merchant(m.merchant)
    assert inbox.refused_count == 1 and reason in inbox.last_refused_reason and inbox.last_refused_at


def test_a_webhook_signed_with_another_secret_says_the_secret_or_body_differs(client, db):
    m = make_merchant()
    response = post(client, m, **signed_headers("whsec_someone-elses"))
    assert response.status_code == 401
    assert "another webhook secret" in response.json()["errorMessage"]
    assert "another webhook secret" in inbox_for_merchant(m.merchant).last_refused_reason
    assert not WebhookInboxMessage.objects.exists()


def test_unsigned_posts_never_push_verified_deliveries_out_of_the_ones_kept(client, db):
    # Issue 29, finding 7: anyone who knows the address could flood it with unsigned POSTs
    # and make the real deliveries disappear from the page.
    m = make_merchant()
    for _ in range(WebhookInboxMessage.KEEP_LATEST):
        assert post(client, m, **signed_headers(m.webhook_secret)).status_code == 200
    for _ in range(25):
        assert post(client, m, b'{"event":"payment.success","forged":true}').status_code == 401
    kept = WebhookInboxMessage.objects.filter(inbox__merchant=m.merchant)
    assert kept.count() == WebhookInboxMessage.KEEP_LATEST and all(kept.values_list("verified", flat=True))
    assert not kept.filter(body__contains="forged").exists()
    assert inbox_for_merchant(m.merchant).refused_count == 25
    html = client.get(inbox_path(inbox_for_merchant(m.merchant))).content.decode()
    assert "forged" not in html and '<article data-verified="false"' not in html
    assert 'data-refused="25"' in html and "<strong>25</strong> POSTs" in html


def test_a_changed_body_is_not_verified():
    secret = "whsec_x"
    header = webhook_signature(secret, BODY, 1_000_000)
    assert signature_check(secret, header, BODY, now_ms=1_000_000) == (
        True, "signature verified with the merchant's current webhook secret")
    verified, reason = signature_check(secret, header, BODY + b" ", now_ms=1_000_000)
    assert not verified and "body was changed" in reason


def test_the_page_shows_each_verified_delivery_and_the_refused_count_with_the_latest_reason(client, db):
    m = make_merchant()
    post(client, m, **signed_headers(m.webhook_secret))
    post(client, m, **signed_headers("whsec_wrong"))
    page = client.get(inbox_path(inbox_for_merchant(m.merchant)))
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('<article data-verified="true"') == 1 and '<article data-verified="false"' not in html
    assert "X-Service-Signature" in html and "&quot;sabpaisaTxnId&quot;: &quot;T1&quot;" in html
    assert 'data-refused="1"' in html and "another webhook secret" in html


def test_one_merchants_inbox_is_not_another_merchants(client, db):
    a, b = make_merchant(), make_merchant()
    post(client, a, **signed_headers(a.webhook_secret))
    assert inbox_for_merchant(a.merchant).token != inbox_for_merchant(b.merchant).token
    page = client.get(inbox_path(inbox_for_merchant(b.merchant))).content.decode()
    assert "evt_1" not in page
    assert client.get("/sandbox/webhooks/not-a-token").status_code == 404


def test_only_the_latest_hundred_deliveries_are_kept(client, db):
    m = make_merchant()
    for _ in range(WebhookInboxMessage.KEEP_LATEST + 3):
        post(client, m, **signed_headers(m.webhook_secret))
    assert WebhookInboxMessage.objects.count() == WebhookInboxMessage.KEEP_LATEST


@pytest.mark.parametrize("method", ["get", "post"])
def test_the_inbox_is_not_found_in_production(client, db, method):
    m = make_merchant()
    path = inbox_path(inbox_for_merchant(m.merchant))
    with override_settings(IS_PRODUCTION=True, GATEWAY_ENV="production"):
        response = getattr(client, method)(path)
    assert response.status_code == 404


def test_a_real_delivery_reaches_the_inbox_signed_and_verified(live_server, settings):
    # The gateway's own worker code posting over loopback HTTP to the gateway's own inbox.
    settings.GATEWAY_PUBLIC_URL = live_server.url
    m = make_merchant()
    address = merchant_point_to_inbox(merchant=m.merchant, actor="test")
    assert address.startswith(live_server.url + "/sandbox/webhooks/")
    m.merchant.refresh_from_db()
    delivery = delivery_attempt_run(webhook_test_send(merchant=m.merchant, actor=None).pk)  # the queued task
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    message = WebhookInboxMessage.objects.get()
    assert message.verified and message.event_id == delivery.event_id and message.event_type == "webhook.test"


def test_set_webhook_points_a_merchant_at_its_inbox_and_is_audited(db):
    m = make_merchant()
    out = io.StringIO()
    call_command("set_webhook", m.code, "--inbox", stdout=out)
    merchant = Merchant.objects.get(pk=m.merchant.pk)
    assert out.getvalue().strip() == merchant.webhook_url
    assert merchant.webhook_url.endswith(inbox_path(inbox_for_merchant(merchant)))
    record = AuditRecord.objects.filter(action="merchant.update", merchant=merchant).get()
    assert record.before["webhook_url"] == "" and record.after["webhook_url"] == merchant.webhook_url
    assert record.actor_name.startswith("cli:") and record.actor_name.endswith(":set_webhook")


def test_set_webhook_sets_and_clears_an_address(db):
    m = make_merchant()
    call_command("set_webhook", m.code, "https://shop.example/hooks", stdout=io.StringIO())
    assert Merchant.objects.get(pk=m.merchant.pk).webhook_url == "https://shop.example/hooks"
    call_command("set_webhook", m.code, "--clear", stdout=io.StringIO())
    assert Merchant.objects.get(pk=m.merchant.pk).webhook_url == ""
    assert AuditRecord.objects.filter(action="merchant.update", merchant=m.merchant).count() == 2


@pytest.mark.parametrize("args, message", [
    (["ftp://shop.example/x"], "webhookUrl: must be an http or https address"),
    (["https://user:pw@shop.example/x"], "webhookUrl: must not carry credentials"),
], ids=["scheme", "credentials"])
def test_set_webhook_refuses_what_the_console_refuses(db, args, message):
    m = make_merchant()
    with pytest.raises(CommandError, match=message):
        call_command("set_webhook", m.code, *args, stdout=io.StringIO())
    assert Merchant.objects.get(pk=m.merchant.pk).webhook_url == ""
    assert not AuditRecord.objects.filter(action="merchant.update", merchant=m.merchant).exists()


def test_set_webhook_refuses_private_addresses_where_they_are_not_allowed(db, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    m = make_merchant()
    with pytest.raises(CommandError, match="webhookUrl: must resolve only to public addresses"):
        call_command("set_webhook", m.code, "--inbox", stdout=io.StringIO())


def test_set_webhook_names_an_unknown_merchant(db):
    with pytest.raises(CommandError, match="code: no merchant NOPE"):
        call_command("set_webhook", "NOPE", "--inbox")


def test_the_inbox_cannot_be_chosen_in_production(db, settings):
    settings.IS_PRODUCTION = True
    m = make_merchant()
    with pytest.raises(CommandError, match="only in staging"):
        call_command("set_webhook", m.code, "--inbox", stdout=io.StringIO())


def test_the_demo_merchant_sends_its_webhooks_to_its_inbox(db):
    out = io.StringIO()
    call_command("demo_merchant", stdout=out)
    printed = json.loads(out.getvalue())
    merchant = Merchant.objects.get(code="DEMO")
    assert printed["webhookUrl"] == merchant.webhook_url
    assert merchant.webhook_url.endswith(inbox_path(inbox_for_merchant(merchant)))
    # Run again: new credentials, same inbox.
    again = json.loads(_run("demo_merchant"))
    assert again["webhookUrl"] == printed["webhookUrl"] and again["secretKey"] != printed["secretKey"]


def _run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_quick_start_line_creates_a_session_for_the_demo_merchant(live_server, settings):
    # The command scripts/quickstart prints, run as a newcomer would.
    import subprocess
    import sys
    from pathlib import Path

    from payments.models import Payment

    settings.GATEWAY_PUBLIC_URL = live_server.url
    creds = json.loads(_run("demo_merchant"))
    script = Path(__file__).resolve().parents[2] / "docs" / "examples" / "create_session.py"
    result = subprocess.run([sys.executable, str(script), creds["merchantId"], creds["apiKey"], creds["secretKey"]],
                            capture_output=True, text=True, timeout=60, env={"GATEWAY_URL": live_server.url})
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith(f"Send the customer to: {live_server.url}/checkout/pay_") and "?clientSecret=" in last
    assert Payment.objects.filter(merchant__code="DEMO", amount=49900).count() == 1
