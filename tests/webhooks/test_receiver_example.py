"""docs/examples/webhook_receiver.py, the receiver merchants copy, run against real deliveries."""
import importlib.util
import threading
from pathlib import Path

import pytest
from django.db import transaction

from gateway.core.signing import webhook_signature
from tests.support.factories import make_merchant
from webhooks import services
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run, event_record

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "webhook_receiver.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("webhook_receiver_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def merchant_server(example, db):
    """The example receiver on loopback, as a merchant's webhook address."""
    received = []
    box = {}

    def start(secret):
        server = example.make_server(secret, lambda event_id, payload: received.append((event_id, payload)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        box["server"] = server
        return f"http://127.0.0.1:{server.server_address[1]}/webhook"

    yield start, received
    if "server" in box:
        box["server"].shutdown()
        box["server"].server_close()


def test_the_example_receiver_accepts_a_real_delivery_and_drops_its_duplicate(merchant_server, admin_user):
    start, received = merchant_server
    tm = make_merchant()
    tm.merchant.webhook_url = start(tm.webhook_secret)
    tm.merchant.save()
    with transaction.atomic():
        event = event_record(merchant=tm.merchant, event_type="payment.success",
                             payload={"event": "payment.success", "txn_id": "SP1", "paid_amount": 500})
    delivery = delivery_attempt_run(event.deliveries.get().pk)
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert received == [(event.id, {"event": "payment.success", "txn_id": "SP1", "paid_amount": 500})]

    # At least once: the same event again (a resend) is acknowledged but not processed twice.
    services.delivery_resend(delivery=delivery, actor=admin_user)
    delivery = delivery_attempt_run(delivery.pk)
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert '"duplicate": true' in delivery.attempt_rows.order_by("-number").first().response_snippet
    assert len(received) == 1


def test_the_example_receiver_rejects_a_delivery_signed_with_another_secret(merchant_server):
    start, received = merchant_server
    tm = make_merchant()
    tm.merchant.webhook_url = start("whsec_not_the_merchants")
    tm.merchant.save()
    with transaction.atomic():
        event = event_record(merchant=tm.merchant, event_type="payment.failed", payload={"event": "payment.failed"})
    delivery = delivery_attempt_run(event.deliveries.get().pk)
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert delivery.attempt_rows.get().http_status == 401
    assert received == []


@pytest.mark.parametrize("header", [None, "", "nodot", "abc.xyz", "1700000000000."])
def test_verify_signature_rejects_malformed_headers(example, header):
    with pytest.raises(example.InvalidSignature):
        example.verify_signature(b"{}", header, "whsec_x")


def test_verify_signature_enforces_the_300000_ms_tolerance(example):
    body, now_ms = b'{"a":1}', 1_700_000_000_000
    example.verify_signature(body, webhook_signature("s", body, now_ms - 300_000), "s", now_ms=now_ms)
    with pytest.raises(example.InvalidSignature):
        example.verify_signature(body, webhook_signature("s", body, now_ms - 300_001), "s", now_ms=now_ms)
    with pytest.raises(example.InvalidSignature):
        example.verify_signature(body, webhook_signature("s", body, now_ms + 300_001), "s", now_ms=now_ms)


def test_verify_signature_fails_on_a_re_serialised_body(example):
    raw, now_ms = b'{"b":1,"a":2}', 1_700_000_000_000
    header = webhook_signature("s", raw, now_ms)
    with pytest.raises(example.InvalidSignature):
        example.verify_signature(b'{"b": 1, "a": 2}', header, "s", now_ms=now_ms)
