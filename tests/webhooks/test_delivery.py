"""Delivery in this process against a real HTTP receiver on loopback."""
import base64
import hashlib
import hmac
import threading
import time

import pytest
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone

from gateway.platform.models import AuditRecord
from tests.support.factories import make_merchant
from tests.support.receiver import Receiver, Reply
from webhooks import delivery as webhook_sending
from webhooks import services
from webhooks.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent
from webhooks.services import delivery_attempt_run, deliveries_due_process, event_record

PAYLOAD = {"event": "payment.success", "txn_id": "SP123", "merchant_txn_id": "order-9", "paid_amount": 10000,
           "customerName": "Zoë"}


def independent_signature_ok(secret: str, header: str, body: bytes, tolerance_ms: int = 300_000) -> bool:
    """The interface's rule, written out again here rather than imported."""
    timestamp, _, signature = header.partition(".")
    if abs(int(time.time() * 1000) - int(timestamp)) > tolerance_ms:
        return False
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode() + b"." + body, hashlib.sha256).digest()
    return hmac.compare_digest(base64.b64encode(mac).decode(), signature)


def record(merchant, payload=PAYLOAD, subject_id="SP123", event_type="payment.success") -> WebhookEvent:
    with transaction.atomic():
        return event_record(merchant=merchant, event_type=event_type, payload=payload, subject_id=subject_id)


def drain(until_status, *, timeout=20.0) -> WebhookDelivery:
    """Run the sweep until the only delivery reaches one of `until_status`."""
    deadline = time.monotonic() + timeout
    while True:
        deliveries_due_process()
        delivery = WebhookDelivery.objects.get()
        if delivery.status in until_status:
            return delivery
        assert time.monotonic() < deadline, f"delivery still {delivery.status}"
        time.sleep(0.1)


def test_delivery_is_signed_over_the_exact_bytes_sent(hooked, receiver):
    event = record(hooked.merchant)
    delivery = delivery_attempt_run(event.deliveries.get().pk)

    (request,) = receiver.requests
    assert request.method == "POST" and request.path == "/hooks/gateway"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["X-Service-Event-Id"] == event.id and event.id.startswith("evt_")
    # Compact ASCII JSON, serialised once and stored: the bytes on the wire are the stored ones.
    assert request.body == b'{"event":"payment.success","txn_id":"SP123","merchant_txn_id":"order-9",' \
                           b'"paid_amount":10000,"customerName":"Zo\\u00eb"}'
    assert request.body == event.body.encode()
    assert independent_signature_ok(hooked.webhook_secret, request.headers["X-Service-Signature"], request.body)
    assert not independent_signature_ok("whsec_wrong", request.headers["X-Service-Signature"], request.body)
    assert delivery.status == WebhookDelivery.Status.DELIVERED and delivery.attempts == 1
    attempt = delivery.attempt_rows.get()
    assert attempt.http_status == 200 and attempt.outcome == "delivered"
    assert attempt.signature_header == request.headers["X-Service-Signature"]
    assert attempt.response_snippet == '{"ok":true}'


@override_settings(WEBHOOK_RETRY_SCHEDULE=[1, 1, 1])
def test_500s_are_retried_with_the_same_event_id_and_a_fresh_signature(hooked, receiver):
    receiver.respond_with(500, 503, 200)
    event = record(hooked.merchant)
    failed_at = None

    delivery = delivery_attempt_run(event.deliveries.get().pk)
    assert delivery.status == WebhookDelivery.Status.FAILED
    failed_at = delivery.attempt_rows.get().finished_at
    # Jitter only shortens the wait: the retry is due at most the scheduled 1 s later.
    assert delivery.next_attempt_at <= failed_at + timezone.timedelta(seconds=1)
    delivery = drain({WebhookDelivery.Status.DELIVERED})

    requests = receiver.wait_for(3)
    assert len(requests) == 3
    assert {r.headers["X-Service-Event-Id"] for r in requests} == {event.id}
    assert {r.body for r in requests} == {event.body.encode()}
    signatures = [r.headers["X-Service-Signature"] for r in requests]
    assert len(set(signatures)) == 3  # a new timestamp each time, so a new signature
    assert all(independent_signature_ok(hooked.webhook_secret, s, event.body.encode()) for s in signatures)
    assert [(a.number, a.http_status, a.outcome) for a in delivery.attempt_rows.all()] == [
        (1, 500, "failed"), (2, 503, "failed"), (3, 200, "delivered")]
    assert delivery.attempts == 3


@override_settings(WEBHOOK_RETRY_SCHEDULE=[0, 0], WEBHOOK_TIMEOUT_SECONDS=1)
def test_no_answer_within_the_timeout_is_a_failed_attempt_and_retried(hooked, receiver):
    receiver.respond_with(Reply(hang=True), 200)
    event = record(hooked.merchant)

    delivery = delivery_attempt_run(event.deliveries.get().pk)
    assert delivery.status == WebhookDelivery.Status.FAILED
    first = delivery.attempt_rows.get()
    assert first.http_status is None and "no answer within 1 s" in first.error
    delivery = drain({WebhookDelivery.Status.DELIVERED})
    first, second = receiver.wait_for(2)
    assert first.headers["X-Service-Event-Id"] == second.headers["X-Service-Event-Id"] == event.id
    assert delivery.attempts == 2


@override_settings(WEBHOOK_RETRY_SCHEDULE=[0, 0, 0])
def test_delivery_is_dead_once_the_schedule_is_exhausted(hooked, receiver):
    receiver.respond_with(default=500)
    record(hooked.merchant)

    delivery = drain({WebhookDelivery.Status.DEAD})
    assert receiver.count == 4  # the first attempt and one per scheduled retry
    assert delivery.attempts == 4 and delivery.next_attempt_at is None
    assert list(delivery.attempt_rows.values_list("outcome", flat=True)) == ["failed"] * 4
    assert deliveries_due_process() == 0 and receiver.count == 4


@override_settings(WEBHOOK_RETRY_SCHEDULE=[0])
def test_4xx_is_retried_like_5xx(hooked, receiver):
    receiver.respond_with(401, 200)
    record(hooked.merchant)
    delivery = drain({WebhookDelivery.Status.DELIVERED})
    assert [a.http_status for a in delivery.attempt_rows.all()] == [401, 200]


@override_settings(WEBHOOK_RETRY_SCHEDULE=[0])
def test_redirects_are_not_followed_and_count_as_failures(hooked, receiver):
    with Receiver() as elsewhere:
        receiver.respond_with(default=Reply(status=307, headers={"Location": elsewhere.url("/stolen")}))
        record(hooked.merchant)
        delivery = drain({WebhookDelivery.Status.DEAD})
        assert elsewhere.count == 0
    attempt = delivery.attempt_rows.first()
    assert attempt.http_status == 307 and "redirect not followed" in attempt.error and "/stolen" in attempt.error


def test_the_event_rolls_back_with_the_callers_transaction(hooked, receiver):
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            event_record(merchant=hooked.merchant, event_type="payment.success", payload=PAYLOAD)
            raise RuntimeError("the payment's transition failed")
    assert not WebhookEvent.objects.exists() and not WebhookDelivery.objects.exists()


def test_the_delivery_is_queued_only_when_the_caller_commits(hooked, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        with transaction.atomic():
            event = event_record(merchant=hooked.merchant, event_type="payment.failed", payload=PAYLOAD)
            assert callbacks == []
    assert len(callbacks) == 1
    delivery = event.deliveries.get()
    assert delivery.status == WebhookDelivery.Status.PENDING and delivery.next_attempt_at <= timezone.now()


def test_an_event_for_a_merchant_without_a_webhook_address_has_no_delivery(db):
    tm = make_merchant()
    event = record(tm.merchant)
    assert WebhookEvent.objects.filter(pk=event.pk).exists() and not event.deliveries.exists()


@override_settings(WEBHOOK_ALLOW_PRIVATE_ADDRESSES=False, WEBHOOK_RETRY_SCHEDULE=[0])
def test_a_private_address_is_refused_at_delivery_time(hooked, receiver):
    # The address was accepted when set (as if its DNS said public then); now it is loopback.
    record(hooked.merchant)
    delivery = drain({WebhookDelivery.Status.DEAD})
    assert receiver.count == 0
    assert "address refused at delivery time" in delivery.attempt_rows.first().error


@override_settings(WEBHOOK_RETRY_SCHEDULE=[0])
def test_an_attempt_whose_worker_died_is_marked_interrupted_and_the_delivery_retried(hooked, receiver):
    event = record(hooked.merchant)
    claim = webhook_sending._delivery_claim(event.deliveries.get().pk)  # ...and the worker dies here
    assert delivery_attempt_run(claim.delivery.pk) is None  # held: nobody else may send it
    WebhookDelivery.objects.filter(pk=claim.delivery.pk).update(next_attempt_at=timezone.now())  # lease over

    delivery = drain({WebhookDelivery.Status.DELIVERED})
    assert [(a.number, a.outcome) for a in delivery.attempt_rows.all()] == [(1, "interrupted"), (2, "delivered")]
    assert receiver.count == 1


@override_settings(WEBHOOK_RETRY_SCHEDULE=[0])
def test_resend_gives_a_dead_delivery_a_fresh_cycle_and_is_audited(hooked, receiver, admin_user):
    receiver.respond_with(500, 500)
    record(hooked.merchant)
    dead = drain({WebhookDelivery.Status.DEAD})

    services.delivery_resend(delivery=dead, actor=admin_user)
    delivery = drain({WebhookDelivery.Status.DELIVERED})
    assert delivery.attempts == 3 and delivery.cycle_attempts == 1
    assert len({r.headers["X-Service-Event-Id"] for r in receiver.requests}) == 1
    audit = AuditRecord.objects.get(action="webhook.resend")
    assert audit.actor == admin_user and audit.object_id == str(delivery.pk)
    assert audit.before["status"] == "dead"


def test_a_test_event_is_queued_then_attempted_once_and_not_retried(hooked, receiver, admin_user):
    receiver.respond_with(500)
    delivery = services.webhook_test_send(merchant=hooked.merchant, actor=admin_user)
    # Queued, not sent by the caller (issue 18: the console's web worker never waits for it).
    assert delivery.status == WebhookDelivery.Status.PENDING and receiver.count == 0
    assert not delivery.attempt_rows.exists()

    delivery = delivery_attempt_run(delivery.pk)  # what the queued task does
    assert delivery.status == WebhookDelivery.Status.DEAD
    (request,) = receiver.requests
    assert request.json()["event"] == "webhook.test"
    assert independent_signature_ok(hooked.webhook_secret, request.headers["X-Service-Signature"], request.body)


def test_two_concurrent_attempts_of_one_delivery_send_it_once(transactional_db):
    with Receiver(responses=[Reply(status=200, delay=0.5)]) as receiver:
        tm = make_merchant(webhook_url=receiver.url())
        event = record(tm.merchant)
        delivery_id = event.deliveries.get().pk
        start = threading.Barrier(4)
        outcomes = []

        def attempt():
            start.wait()
            try:
                outcomes.append(delivery_attempt_run(delivery_id))
            finally:
                connection.close()

        threads = [threading.Thread(target=attempt) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert deliveries_due_process() == 0
        assert receiver.count == 1
    assert sum(o is not None for o in outcomes) == 1
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    assert delivery.status == WebhookDelivery.Status.DELIVERED and delivery.attempts == 1
    assert WebhookDeliveryAttempt.objects.filter(delivery=delivery).count() == 1
