"""Every write of the webhook outbox.

- `event_record` is called by the payments and refunds code inside their own transaction, so
  a final status and its webhook commit or roll back together.
- `delivery_attempt_run` makes one attempt of one delivery; `deliveries_due_process` is the
  beat sweep's loop over everything due. Both claim the delivery first, so two workers never
  send the same attempt twice.
- `delivery_resend` and `webhook_test_send` are what the admin calls.

At least once: the HTTP call happens outside any transaction (a row lock is never held across
the network). A worker that dies after the merchant answered but before the result was
recorded causes one extra delivery, which the merchant drops by X-Service-Event-Id.
"""
from __future__ import annotations

import json
import logging
import random
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from gateway.errors import ValidationError
from gateway.models import Merchant
from gateway.services import audit_record
from gateway.signing import webhook_signature
from webhooks import transport
from webhooks.locks import delivery_due_lock, delivery_lock
from webhooks.models import TEST_EVENT_TYPE, WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent

logger = logging.getLogger("webhooks")

# A claim outlives the longest possible attempt (the per-attempt timeout) by this much, which
# covers recording the result. When it runs out the worker is presumed dead.
CLAIM_MARGIN_SECONDS = 5
# Retries further away than this are left to the beat sweep: Redis redelivers ETA messages
# older than its visibility timeout, and nothing is gained by holding them in a worker.
COUNTDOWN_MAX_SECONDS = 300
# One sweep stops after this many deliveries or seconds, and the next sweep carries on.
SWEEP_MAX_DELIVERIES = 100
SWEEP_BUDGET_SECONDS = 30
# The share of each scheduled wait that jitter may take off (never added: the schedule is an
# upper bound, so the first retry stays within the 10 s CONTRACT.md promises).
RETRY_JITTER = 0.2

_FAIL_FAST = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}

INTERRUPTED_ERROR = "the worker stopped before recording a result; the merchant may or may not have received it"


def event_body(payload: dict) -> str:
    """The payload serialised once: compact, ASCII-only JSON (interface: the raw body is signed)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=True, cls=DjangoJSONEncoder)


def _enqueue(delivery_id: int, countdown: float | None = None) -> None:
    """Queue an attempt. A broker outage only delays the delivery: the sweep will find it."""
    from gateway.celery import app
    from webhooks.tasks import delivery_attempt

    try:
        # Fail fast: Celery's default is to keep reconnecting for seconds, inside the
        # caller's request, for a message the sweep makes optional anyway.
        with app.pool.acquire(block=True, timeout=2) as conn:
            conn.ensure_connection(**_FAIL_FAST)
            delivery_attempt.apply_async((delivery_id,), countdown=countdown, connection=conn,
                                         retry=True, retry_policy=_FAIL_FAST)
    except Exception as exc:  # noqa: BLE001 - whatever the broker raises, the row stays due
        logger.warning("webhook delivery %s not queued (%s); the due-deliveries sweep will send it",
                       delivery_id, type(exc).__name__)


def _enqueue_on_commit(delivery_id: int, countdown: float | None = None) -> None:
    transaction.on_commit(lambda: _enqueue(delivery_id, countdown))


def event_record(*, merchant: Merchant, event_type: str, payload: dict, subject_id: str = "") -> WebhookEvent:
    """Record an event for `merchant` and, when the merchant has a webhook address, a delivery
    due now. Call it inside the caller's transaction.atomic(): the event exists exactly when
    the caller's change commits, and the delivery is queued only after that commit.

    `subject_id` is the payment's sabpaisaTxnId or the refund's refundId. Raises ValueError for
    an empty event type or a payload that is not a JSON object."""
    if not event_type:
        raise ValueError("event_type is required")
    if not isinstance(payload, dict):
        raise ValueError("payload must be a dict (a JSON object)")
    body = event_body(payload)
    with transaction.atomic():
        event = WebhookEvent.objects.create(
            merchant=merchant, event_type=event_type, subject_id=subject_id or "",
            payload=json.loads(body), body=body,
        )
        if merchant.webhook_url:
            delivery = WebhookDelivery.objects.create(
                event=event, merchant=merchant, next_attempt_at=event.created_at)
            _enqueue_on_commit(delivery.id)
    return event


@dataclass
class Claim:
    delivery: WebhookDelivery
    attempt: WebhookDeliveryAttempt
    token: str


def _claim_seconds() -> float:
    return settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS


@transaction.atomic
def _delivery_claim(delivery_id: int | None = None) -> Claim | None:
    """Take one due delivery (that one, or the most overdue) for this worker, or None.

    The claim is a lease: next_attempt_at moves past the end of the attempt, so nobody else
    finds the delivery due while it is being sent, and finds it again if this worker dies."""
    now = timezone.now()
    delivery = delivery_due_lock(delivery_id)
    if delivery is None:
        return None
    # An attempt still open here belongs to a worker whose claim ran out: it died mid-attempt.
    delivery.attempt_rows.filter(finished_at__isnull=True).update(
        outcome=WebhookDeliveryAttempt.Outcome.INTERRUPTED, finished_at=now, error=INTERRUPTED_ERROR)
    token = secrets.token_hex(16)
    delivery.claim_token = token
    delivery.next_attempt_at = now + timedelta(seconds=_claim_seconds())
    delivery.attempts += 1
    delivery.cycle_attempts += 1
    delivery.last_attempt_at = now
    delivery.save(update_fields=["claim_token", "next_attempt_at", "attempts", "cycle_attempts",
                                 "last_attempt_at", "updated_at"])
    attempt = WebhookDeliveryAttempt.objects.create(
        delivery=delivery, number=delivery.attempts, url=delivery.merchant.webhook_url, started_at=now)
    return Claim(delivery, attempt, token)


def _delivery_send(claim: Claim) -> tuple[transport.Result, str]:
    """POST the event's stored bytes, freshly signed. No database lock is held here."""
    delivery, event, merchant = claim.delivery, claim.delivery.event, claim.delivery.merchant
    url = claim.attempt.url
    if not url:
        return transport.Result(error="the merchant has no webhook address"), ""
    body = event.body_bytes
    signature = webhook_signature(merchant.webhook_secret, body, int(time.time() * 1000))
    headers = {
        "Content-Type": "application/json",
        "X-Service-Signature": signature,
        "X-Service-Event-Id": event.id,
        "X-Service-Event-Type": event.event_type,
        "User-Agent": "gateway-webhooks/1",
    }
    logger.info("webhook attempt %s of delivery %s (%s)", claim.attempt.number, delivery.pk, event.id)
    return transport.post(url, body, headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS), signature


def retry_delay(position: int, *, event_type: str = "") -> float | None:
    """Seconds to wait after the failed attempt number `position` (1-based) of a cycle, with
    jitter, or None when the schedule is exhausted. Test events get no retries."""
    schedule = [] if event_type == TEST_EVENT_TYPE else list(settings.WEBHOOK_RETRY_SCHEDULE)
    if position > len(schedule):
        return None
    base = schedule[position - 1]
    return base * (1 - RETRY_JITTER * random.random())


@transaction.atomic
def _delivery_result_record(claim: Claim, result: transport.Result, signature: str) -> WebhookDelivery:
    now = timezone.now()
    delivery = delivery_lock(claim.delivery.pk)
    attempt = claim.attempt
    attempt.finished_at = now
    attempt.duration_ms = result.duration_ms
    attempt.http_status = result.status
    attempt.response_snippet = result.snippet[: WebhookDeliveryAttempt.SNIPPET_CHARS]
    attempt.error = result.error
    attempt.signature_header = signature
    attempt.outcome = (WebhookDeliveryAttempt.Outcome.DELIVERED if result.ok
                       else WebhookDeliveryAttempt.Outcome.FAILED)
    attempt.save()

    if delivery.status == WebhookDelivery.Status.DELIVERED:
        return delivery  # an earlier (or overlapping) attempt was acknowledged already
    if result.ok:
        delivery.status = WebhookDelivery.Status.DELIVERED
        delivery.delivered_at = now
        delivery.next_attempt_at = None
        delivery.claim_token = ""
    elif delivery.claim_token != claim.token:
        # Our claim ran out and another worker holds the delivery: its result will decide.
        return delivery
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
    delivery.save()
    return delivery


def _attempt(claim: Claim) -> WebhookDelivery:
    try:
        result, signature = _delivery_send(claim)
    except Exception as exc:  # noqa: BLE001 - a bug here must still close the attempt row
        logger.exception("webhook delivery %s: unexpected error while sending", claim.delivery.pk)
        result, signature = transport.Result(error=f"internal error: {type(exc).__name__}"), ""
    return _delivery_result_record(claim, result, signature)


def delivery_attempt_run(delivery_id: int) -> WebhookDelivery | None:
    """Make one attempt of the delivery if it is due and nobody else holds it; returns the
    delivery after the attempt, or None when there was nothing to do."""
    claim = _delivery_claim(delivery_id)
    return _attempt(claim) if claim else None


def deliveries_due_process(*, max_deliveries: int = SWEEP_MAX_DELIVERIES,
                           budget_seconds: float = SWEEP_BUDGET_SECONDS) -> int:
    """Attempt due deliveries one by one, each claimed just before it is sent, until none is
    due or the budget is spent. Returns how many were attempted. Safe to run concurrently."""
    started = time.monotonic()
    done = 0
    while done < max_deliveries and time.monotonic() - started < budget_seconds:
        claim = _delivery_claim()
        if claim is None:
            break
        _attempt(claim)
        done += 1
    return done


@transaction.atomic
def delivery_resend(*, delivery: WebhookDelivery, actor) -> WebhookDelivery:
    """Make any delivery (delivered and dead ones included) due now, with a fresh retry
    cycle, and audit who asked. The event, its id and its body are unchanged. Raises
    ValidationError while an attempt is in flight or when the merchant has no address."""
    delivery = delivery_lock(delivery.pk)
    if delivery.in_flight:
        raise ValidationError("an attempt is in progress; try again in a few seconds", field="delivery")
    if not delivery.merchant.webhook_url:
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
    """Record a `webhook.test` event for the merchant and attempt it at once, in this process,
    so staff see the answer on the next page. Test events are attempted once, never retried.
    Raises ValidationError when the merchant has no webhook address."""
    if not merchant.webhook_url:
        raise ValidationError("the merchant has no webhook address", field="webhook_url")
    with transaction.atomic():
        event = event_record(merchant=merchant, event_type=TEST_EVENT_TYPE, payload={
            "event": TEST_EVENT_TYPE,
            "merchantId": merchant.code,
            "message": "This is a test event sent from the gateway console.",
            "createdAt": timezone.now().isoformat(timespec="seconds"),
        })
        delivery = event.deliveries.get()
        audit_record(actor=actor, action="webhook.test_send", obj=delivery, merchant=merchant,
                     after={"event_id": event.id, "url": merchant.webhook_url})
    # The queued task may win the claim; then this returns the delivery as the worker left it.
    delivery_attempt_run(delivery.pk)
    delivery.refresh_from_db()
    return delivery
