"""Every write of the webhook outbox.

- `event_record` is called by the payments and refunds code inside their own transaction, so
  a final status and its webhook commit or roll back together.
- Sending is webhooks.delivery (`delivery_attempt_run`, `deliveries_attempt_run`, the sweep's
  `deliveries_due_process`; importable from here too), run by webhooks.tasks.
- Deliveries recorded in one transaction are queued together when it commits: one message
  for one delivery, one message per batch of BATCH_SIZE for a burst.
- `delivery_resend` and `webhook_test_send` are what the admin calls; both only make a delivery
  due and queue it, so no web request waits for a merchant's server.
- Every status change is checked against webhooks.state.TRANSITIONS.
"""
from __future__ import annotations

import json
import logging

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from gateway.core.errors import ValidationError
from gateway.platform.models import Merchant
from gateway.platform.services import audit_record
from webhooks import writes
# Sending lives apart (webhooks.delivery), so that the tasks queued from here import nothing
# that imports them; its entry points stay importable from here.
from webhooks.delivery import (  # noqa: F401
    deliveries_attempt_run,
    deliveries_due_process,
    delivery_attempt_run,
    delivery_status_set,
    retry_delay,
)
from webhooks.locks import delivery_lock
from webhooks.models import TEST_EVENT_TYPE, WebhookDelivery, WebhookEvent, new_event_id
from webhooks.payloads import event_timestamp
from webhooks.tasks import deliveries_queue

logger = logging.getLogger("webhooks")


def event_body(payload: dict) -> str:
    """The payload serialised once: compact, ASCII-only JSON (interface: the raw body is signed)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=True, cls=DjangoJSONEncoder)


class _PendingDeliveries:
    """The deliveries recorded in one transaction, queued together once it commits."""

    def __init__(self):
        self.ids: list[int] = []

    def __call__(self) -> None:
        if self.ids:
            deliveries_queue(self.ids)


def _enqueue_on_commit(delivery_id: int) -> None:
    connection = transaction.get_connection()
    if not connection.in_atomic_block:  # autocommit: committed already
        deliveries_queue([delivery_id])
        return
    pending = getattr(connection, "_webhook_pending_deliveries", None)
    # This transaction's batch is the one whose callback still waits for the commit: a commit
    # runs it and a rollback drops it, so the next transaction starts a batch of its own.
    if pending is None or not any(entry[1] is pending for entry in connection.run_on_commit):
        pending = connection._webhook_pending_deliveries = _PendingDeliveries()
        transaction.on_commit(pending)
    pending.ids.append(delivery_id)


def event_record(*, merchant: Merchant, event_type: str, payload: dict, subject_id: str = "",
                 url: str = "", event_id: str | None = None) -> WebhookEvent:
    """Record an event for `merchant` and, when there is an address to send it to, a delivery
    due now. Call it inside the caller's transaction.atomic(): the event exists exactly when
    the caller's change commits, and the delivery is queued only after that commit.

    `subject_id` is the payment's sabpaisaTxnId or the refund's refundId. `url` is the
    payment's own webhook address (S2S webhookUrl, checked at creation), used instead of the
    merchant's. `event_id` (from new_event_id) is for a payload that names its own event.
    Raises ValueError for an empty event type or a payload that is not a JSON object."""
    return events_record([(merchant, event_type, payload, subject_id)], urls=[url], event_ids=[event_id])[0]


def events_record(events: list[tuple[Merchant, str, dict, str]], *, urls: list[str] | None = None,
                  event_ids: list[str | None] | None = None) -> list[WebhookEvent]:
    """event_record for many (merchant, event type, payload, subject id) at once, as the expiry
    sweep records them: one INSERT for the events and one for their deliveries. `urls` and
    `event_ids`, when given, hold each event's own address (or "") and id (or None) in the
    same order."""
    rows = []
    for index, (merchant, event_type, payload, subject_id) in enumerate(events):
        if not event_type:
            raise ValueError("event_type is required")
        if not isinstance(payload, dict):
            raise ValueError("payload must be a dict (a JSON object)")
        body = event_body(payload)
        event_id = event_ids[index] if event_ids else None
        rows.append(WebhookEvent(id=event_id or new_event_id(), merchant=merchant, event_type=event_type,
                                 subject_id=subject_id or "", payload=json.loads(body), body=body))
    deliveries = [WebhookDelivery(event=event, merchant=event.merchant, url=url, next_attempt_at=event.created_at)
                  for event, url in zip(rows, urls or [""] * len(rows)) if url or event.merchant.webhook_url]
    with transaction.atomic():
        writes.events_insert(rows, deliveries)
        for delivery in deliveries:
            _enqueue_on_commit(delivery.id)
    return rows


@transaction.atomic
def delivery_resend(*, delivery: WebhookDelivery, actor) -> WebhookDelivery:
    """Make any delivery (delivered and dead ones included) due now, with a fresh retry
    cycle, and audit who asked. The event, its id and its body are unchanged. Raises
    ValidationError while an attempt is in flight or when the merchant has no address."""
    delivery = delivery_lock(delivery.pk)
    if delivery.in_flight:
        raise ValidationError("an attempt is in progress; try again in a few seconds", field="delivery")
    if not delivery.address:
        raise ValidationError("the merchant has no webhook address", field="webhook_url")
    before = {"status": delivery.status, "attempts": delivery.attempts}
    delivery_status_set(delivery, WebhookDelivery.Status.PENDING, cycle_attempts=0, claim_token="",
                next_attempt_at=timezone.now())
    delivery.save()
    audit_record(actor=actor, action="webhook.resend", obj=delivery, merchant=delivery.merchant,
                 before=before, after={"status": delivery.status, "event_id": delivery.event_id})
    _enqueue_on_commit(delivery.pk)
    return delivery


def webhook_test_send(*, merchant: Merchant, actor) -> WebhookDelivery:
    """Record a `webhook.test` event for the merchant, audited, and queue its delivery: the
    Celery task `delivery_attempt` sends it once the transaction commits (the beat sweep if
    the broker is down), never the web process, which would wait up to the attempt's timeout
    plus DNS. Test events are attempted once, never retried; the result appears on the
    delivery's page. Raises ValidationError when the merchant has no webhook address."""
    if not merchant.webhook_url:
        raise ValidationError("the merchant has no webhook address", field="webhook_url")
    with transaction.atomic():
        event_id = new_event_id()
        event = event_record(merchant=merchant, event_type=TEST_EVENT_TYPE, event_id=event_id, payload={
            "event": TEST_EVENT_TYPE,
            "merchantId": merchant.code,
            "message": "This is a test event sent from the gateway console.",
            "createdAt": timezone.now().isoformat(timespec="seconds"),
            "timestamp": event_timestamp(),
            "idempotency_key": event_id,
        })
        delivery = event.deliveries.get()
        audit_record(actor=actor, action="webhook.test_send", obj=delivery, merchant=merchant,
                     after={"event_id": event.id, "url": merchant.webhook_url})
    return delivery
