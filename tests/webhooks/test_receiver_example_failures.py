"""docs/examples/webhook_receiver.py must not lose an event whose handler fails: the event id
is remembered only once the handler succeeded, so the gateway's retry is processed."""
import importlib.util
import threading
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from tests.support.factories import make_merchant
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run, event_record

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "webhook_receiver.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("webhook_receiver_example_failures", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def serve(example):
    servers = []

    def start(secret, on_event):
        server = example.make_server(secret, on_event)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/webhook"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _retry_now(delivery):
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    return delivery_attempt_run(delivery.pk)


def test_an_event_whose_handler_failed_is_processed_when_the_gateway_retries(serve, db):
    processed, calls = [], []

    def flaky(event_id, payload):
        calls.append(event_id)
        if len(calls) == 1:
            raise RuntimeError("the merchant's database is down")
        processed.append((event_id, payload))

    tm = make_merchant()
    tm.merchant.webhook_url = serve(tm.webhook_secret, flaky)
    tm.merchant.save()
    with transaction.atomic():
        event = event_record(merchant=tm.merchant, event_type="payment.success",
                             payload={"event": "payment.success", "txn_id": "SP9"})

    first = delivery_attempt_run(event.deliveries.get().pk)
    assert first.status == WebhookDelivery.Status.FAILED  # not acknowledged: the gateway will retry
    assert first.attempt_rows.get().http_status == 500
    assert processed == []

    retried = _retry_now(first)
    assert retried.status == WebhookDelivery.Status.DELIVERED
    assert processed == [(event.id, {"event": "payment.success", "txn_id": "SP9"})]
    assert '"duplicate"' not in retried.attempt_rows.order_by("-number").first().response_snippet

    # Once processed, a further delivery of the event is a duplicate and is not processed again.
    WebhookDelivery.objects.filter(pk=retried.pk).update(status=WebhookDelivery.Status.PENDING)
    again = _retry_now(retried)
    assert '"duplicate": true' in again.attempt_rows.order_by("-number").first().response_snippet
    assert len(processed) == 1 and len(calls) == 2


def test_seen_events_remembers_an_id_only_when_its_processing_succeeded(example):
    seen = example.SeenEvents()
    assert seen.begin("evt_1") == example.SeenEvents.NEW
    assert seen.begin("evt_1") == example.SeenEvents.IN_PROGRESS  # a concurrent redelivery
    seen.release("evt_1")  # the handler failed
    assert seen.begin("evt_1") == example.SeenEvents.NEW
    seen.done("evt_1")
    assert seen.begin("evt_1") == example.SeenEvents.DONE
