"""Every write of the webhook outbox.

- `event_record` is called by the payments and refunds code inside their own transaction, so
  a final status and its webhook commit or roll back together.
- `delivery_attempt_run` makes one attempt of one delivery, `deliveries_attempt_run` one
  attempt of each of a batch, and `deliveries_due_process` is the beat sweep's loop over
  everything due. All claim the deliveries first, so two workers never send the same attempt
  twice; a batch is claimed in one transaction, sent concurrently (a thread per delivery, so
  one slow receiver holds up no other) and its results recorded in one transaction.
- Deliveries recorded in one transaction are queued together when it commits: one message
  for one delivery, one message per batch of BATCH_SIZE for a burst.
- `delivery_resend` and `webhook_test_send` are what the admin calls; both only make a delivery
  due and queue it, so no web request waits for a merchant's server.

At least once: the HTTP call happens outside any transaction (a row lock is never held across
the network). A worker that dies after the merchant answered but before the result was
recorded causes one extra delivery, which the merchant drops by X-Service-Event-Id.
"""
from __future__ import annotations

import contextvars
import json
import logging
import random
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from gateway.perf import sql
from gateway.core.broker import tasks_publish
from gateway.core.errors import ValidationError
from gateway.platform.models import Merchant
from gateway.platform.services import audit_record
from gateway.core.signing import webhook_signature
from webhooks import transport
from webhooks.locks import deliveries_due_lock, deliveries_lock, delivery_lock
from webhooks.models import TEST_EVENT_TYPE, WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent, new_event_id
from webhooks.payloads import event_timestamp

logger = logging.getLogger("webhooks")

# A claim outlives the longest possible attempt (the per-attempt timeout) by this much, which
# covers recording the result. When it runs out the worker is presumed dead.
CLAIM_MARGIN_SECONDS = 5
# Retries further away than this are left to the beat sweep: Redis redelivers ETA messages
# older than its visibility timeout, and nothing is gained by holding them in a worker.
COUNTDOWN_MAX_SECONDS = 300
# One sweep stops after this many deliveries or seconds, and the next sweep carries on.
SWEEP_MAX_DELIVERIES = 5000
SWEEP_BUDGET_SECONDS = 30
# Deliveries claimed, sent and recorded together. Each gets a thread of its own, so every
# attempt of a batch ends within the timeout and the batch's results within its claims' lease.
BATCH_SIZE = 32
# The share of each scheduled wait that jitter may take off (never added: the schedule is an
# upper bound, so the first retry stays within the 10 s CONTRACT.md promises).
RETRY_JITTER = 0.2

INTERRUPTED_ERROR = "the worker stopped before recording a result; the merchant may or may not have received it"


def event_body(payload: dict) -> str:
    """The payload serialised once: compact, ASCII-only JSON (interface: the raw body is signed)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=True, cls=DjangoJSONEncoder)


def _enqueue(delivery_id: int, countdown: float | None = None) -> None:
    """Queue an attempt. A broker outage only delays the delivery: the sweep will find it."""
    from webhooks.tasks import delivery_attempt

    _publish([(delivery_attempt, (delivery_id,), countdown)], [delivery_id])


def _enqueue_many(delivery_ids: list[int]) -> None:
    """Queue attempts of many deliveries: one message per BATCH_SIZE of them."""
    from webhooks.tasks import deliveries_attempt, delivery_attempt

    if len(delivery_ids) == 1:
        messages = [(delivery_attempt, (delivery_ids[0],), None)]
    else:
        messages = [(deliveries_attempt, (delivery_ids[i:i + BATCH_SIZE],), None)
                    for i in range(0, len(delivery_ids), BATCH_SIZE)]
    _publish(messages, delivery_ids)


def _publish(messages, delivery_ids: list[int]) -> None:
    # One bounded attempt, never raising (gateway.core.broker): the sweep makes the message optional.
    ids = ",".join(map(str, delivery_ids[:10])) + ("..." if len(delivery_ids) > 10 else "")
    tasks_publish(messages, what=f"webhook deliveries {ids}", fallback="the due-deliveries sweep will send them")


class _PendingDeliveries:
    """The deliveries recorded in one transaction, queued together once it commits."""

    def __init__(self):
        self.ids: list[int] = []

    def __call__(self) -> None:
        if self.ids:
            _enqueue_many(self.ids)


def _enqueue_on_commit(delivery_id: int, countdown: float | None = None) -> None:
    if countdown is not None:  # a retry keeps a message of its own, with its own delay
        transaction.on_commit(lambda: _enqueue(delivery_id, countdown))
        return
    connection = transaction.get_connection()
    if not connection.in_atomic_block:  # autocommit: committed already
        _enqueue(delivery_id)
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
        sql.insert_rows(WebhookEvent, rows)
        sql.insert_rows(WebhookDelivery, deliveries)
        for delivery in deliveries:
            _enqueue_on_commit(delivery.id)
    return rows


@dataclass
class Claim:
    delivery: WebhookDelivery
    attempt: WebhookDeliveryAttempt
    token: str


def _claim_seconds() -> float:
    return settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS


@transaction.atomic
def _deliveries_claim(delivery_ids: list[int] | None = None, *, limit: int = BATCH_SIZE) -> list[Claim]:
    """Take up to `limit` due deliveries (those given, or the most overdue) for this worker.

    The claim is a lease: next_attempt_at moves past the end of the attempt, so nobody else
    finds a claimed delivery due while it is being sent, and finds it again if this worker dies."""
    now = timezone.now()
    deliveries = deliveries_due_lock(delivery_ids, limit=limit)
    if not deliveries:
        return []
    # An attempt still open here belongs to a worker whose claim ran out: it died mid-attempt.
    WebhookDeliveryAttempt.objects.filter(delivery__in=deliveries, finished_at__isnull=True).update(
        outcome=WebhookDeliveryAttempt.Outcome.INTERRUPTED, finished_at=now, error=INTERRUPTED_ERROR)
    lease = now + timedelta(seconds=_claim_seconds())
    for delivery in deliveries:
        delivery.claim_token = secrets.token_hex(16)
        delivery.next_attempt_at = lease
        delivery.attempts += 1
        delivery.cycle_attempts += 1
        delivery.last_attempt_at = now
        delivery.updated_at = now
    sql.update_rows(WebhookDelivery, deliveries, ["claim_token", "next_attempt_at", "attempts", "cycle_attempts",
                                                  "last_attempt_at", "updated_at"])
    attempts = WebhookDeliveryAttempt.objects.bulk_create([
        WebhookDeliveryAttempt(delivery=d, number=d.attempts, url=d.address, started_at=now)
        for d in deliveries])
    return [Claim(d, a, d.claim_token) for d, a in zip(deliveries, attempts)]


def _delivery_claim(delivery_id: int | None = None) -> Claim | None:
    """Take one due delivery (that one, or the most overdue) for this worker, or None."""
    claims = _deliveries_claim([delivery_id] if delivery_id is not None else None, limit=1)
    return claims[0] if claims else None


def _delivery_send(claim: Claim) -> tuple[transport.Result, str]:
    """POST the event's stored bytes, freshly signed. No database lock is held here, nor any
    database connection used: this runs in the batch's threads."""
    delivery, event, merchant = claim.delivery, claim.delivery.event, claim.delivery.merchant
    url = claim.attempt.url
    if not url:
        return transport.Result(error="the merchant has no webhook address"), ""
    body = event.body_bytes
    timestamp_ms = int(time.time() * 1000)
    signature = webhook_signature(merchant.webhook_secret, body, timestamp_ms)
    headers = {
        "Content-Type": "application/json",
        "X-Service-Signature": signature,
        "X-Service-Event-Id": event.id,
        "X-Service-Event-Type": event.event_type,
        # The live SabPaisa API's names, for receivers written from its docs (docs/webhooks.md):
        # the same signature, the same event, and the timestamp the signature starts with. One
        # delivery per event, so the delivery id is the event id, the same on every attempt.
        "X-SabPaisa-Signature": signature,
        "X-SabPaisa-Event": event.event_type,
        "X-SabPaisa-Delivery-Id": event.id,
        "X-SabPaisa-Timestamp": str(timestamp_ms),
        "User-Agent": "gateway-webhooks/1",
    }
    previous = merchant.previous_webhook_secret()
    if previous:
        # A rotation's grace period: the secret it replaced signs the same bytes and timestamp,
        # so a receiver not yet switched to the new secret still verifies (docs/webhooks.md).
        headers["X-Service-Signature-Previous"] = webhook_signature(previous, body, timestamp_ms)
    logger.info("webhook attempt %s of delivery %s (%s)", claim.attempt.number, delivery.pk, event.id)
    return transport.post(url, body, headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS), signature


def _send(claim: Claim) -> tuple[transport.Result, str]:
    try:
        return _delivery_send(claim)
    except Exception as exc:  # noqa: BLE001 - a bug here must still close the attempt row
        logger.exception("webhook delivery %s: unexpected error while sending", claim.delivery.pk)
        return transport.Result(error=f"internal error: {type(exc).__name__}"), ""


def _send_all(claims: list[Claim]) -> list[tuple[transport.Result, str]]:
    """Send every claimed delivery at once, each in a thread of its own."""
    if len(claims) == 1:
        return [_send(claims[0])]
    with ThreadPoolExecutor(max_workers=len(claims), thread_name_prefix="webhook") as pool:
        # Each thread runs in a copy of this context, so its log lines keep the task's traceId.
        futures = [pool.submit(contextvars.copy_context().run, _send, claim) for claim in claims]
        return [future.result() for future in futures]


def retry_delay(position: int, *, event_type: str = "") -> float | None:
    """Seconds to wait after the failed attempt number `position` (1-based) of a cycle, with
    jitter, or None when the schedule is exhausted. Test events get no retries."""
    schedule = [] if event_type == TEST_EVENT_TYPE else list(settings.WEBHOOK_RETRY_SCHEDULE)
    if position > len(schedule):
        return None
    base = schedule[position - 1]
    return base * (1 - RETRY_JITTER * random.random())


_ATTEMPT_RESULT_FIELDS = ["finished_at", "duration_ms", "http_status", "response_snippet", "error",
                          "signature_header", "outcome"]
_DELIVERY_RESULT_FIELDS = ["status", "delivered_at", "next_attempt_at", "claim_token", "updated_at"]


@transaction.atomic
def _deliveries_results_record(outcomes: list[tuple[Claim, transport.Result, str]]) -> list[WebhookDelivery]:
    """Record the attempts' results and decide what comes next for each delivery (delivered,
    retried later or dead), in one transaction. Returns the deliveries as they now are."""
    now = timezone.now()
    locked = {d.pk: d for d in deliveries_lock([claim.delivery.pk for claim, _, _ in outcomes])}
    attempts, changed, out = [], [], []
    for claim, result, signature in outcomes:
        delivery = locked[claim.delivery.pk]
        attempt = claim.attempt
        attempt.finished_at = now
        attempt.duration_ms = result.duration_ms
        attempt.http_status = result.status
        attempt.response_snippet = result.snippet[: WebhookDeliveryAttempt.SNIPPET_CHARS]
        attempt.error = result.error
        attempt.signature_header = signature
        attempt.outcome = (WebhookDeliveryAttempt.Outcome.DELIVERED if result.ok
                           else WebhookDeliveryAttempt.Outcome.FAILED)
        attempts.append(attempt)
        out.append(delivery)
        if delivery.status == WebhookDelivery.Status.DELIVERED:
            continue  # an earlier (or overlapping) attempt was acknowledged already
        if result.ok:
            delivery.status = WebhookDelivery.Status.DELIVERED
            delivery.delivered_at = now
            delivery.next_attempt_at = None
            delivery.claim_token = ""
        elif delivery.claim_token != claim.token:
            # Our claim ran out and another worker holds the delivery: its result will decide.
            continue
        else:
            delay = retry_delay(delivery.cycle_attempts, event_type=delivery.event.event_type)
            delivery.claim_token = ""
            if delay is None:
                delivery.status = WebhookDelivery.Status.DEAD
                delivery.next_attempt_at = None
            else:
                delivery.status = WebhookDelivery.Status.FAILED
                delivery.next_attempt_at = now + timedelta(seconds=delay)
                if delay <= COUNTDOWN_MAX_SECONDS:
                    # A little late rather than early: a task that runs before next_attempt_at
                    # finds nothing due and the retry waits for the sweep.
                    _enqueue_on_commit(delivery.pk, countdown=delay + 0.2)
        delivery.updated_at = now
        changed.append(delivery)
    sql.update_rows(WebhookDeliveryAttempt, attempts, _ATTEMPT_RESULT_FIELDS)
    sql.update_rows(WebhookDelivery, changed, _DELIVERY_RESULT_FIELDS)
    return out


def _attempt_all(claims: list[Claim]) -> list[WebhookDelivery]:
    results = _send_all(claims)
    return _deliveries_results_record([(claim, result, signature)
                                       for claim, (result, signature) in zip(claims, results)])


def delivery_attempt_run(delivery_id: int) -> WebhookDelivery | None:
    """Make one attempt of the delivery if it is due and nobody else holds it; returns the
    delivery after the attempt, or None when there was nothing to do."""
    claims = _deliveries_claim([delivery_id], limit=1)
    return _attempt_all(claims)[0] if claims else None


def deliveries_attempt_run(delivery_ids: list[int]) -> int:
    """One attempt of each of these deliveries that is due and that nobody else holds, all at
    once. Returns how many were attempted."""
    done = 0
    for start in range(0, len(delivery_ids), BATCH_SIZE):
        claims = _deliveries_claim(delivery_ids[start:start + BATCH_SIZE], limit=BATCH_SIZE)
        if claims:
            _attempt_all(claims)
            done += len(claims)
    return done


def deliveries_due_process(*, max_deliveries: int = SWEEP_MAX_DELIVERIES,
                           budget_seconds: float = SWEEP_BUDGET_SECONDS) -> int:
    """Attempt due deliveries, most overdue first, a batch at a time, until none is due or the
    budget is spent. Returns how many were attempted. Safe to run concurrently."""
    started = time.monotonic()
    done = 0
    while done < max_deliveries and time.monotonic() - started < budget_seconds:
        claims = _deliveries_claim(limit=min(BATCH_SIZE, max_deliveries - done))
        if not claims:
            break
        _attempt_all(claims)
        done += len(claims)
    return done


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
    delivery.status = WebhookDelivery.Status.PENDING
    delivery.cycle_attempts = 0
    delivery.claim_token = ""
    delivery.next_attempt_at = timezone.now()
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
