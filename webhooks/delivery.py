"""Sending the webhook outbox: the work of the tasks in webhooks.tasks, and of the beat's sweep.

- `delivery_attempt_run` makes one attempt of one delivery, `deliveries_attempt_run` one
  attempt of each of a batch, and `deliveries_due_process` is the beat sweep's loop over
  everything due. All claim the deliveries first, so two workers never send the same attempt
  twice; a batch is claimed in one transaction, sent concurrently (a thread per delivery, so
  one slow receiver holds up no other) and its results recorded in one transaction.
- Every status change is checked against webhooks.state.TRANSITIONS (`delivery_status_set`).
- Nothing here queues a task: a failed attempt's soon retry is handed to the `retry_queue`
  the caller gives (webhooks.tasks gives one that queues an attempt after the commit), so this
  module never imports the tasks that import it. Without one, the sweep finds the retry when
  it is due.

At least once: the HTTP call happens outside any transaction (a row lock is never held across
the network). A worker that dies after the merchant answered but before the result was
recorded causes one extra delivery, which the merchant drops by X-Service-Event-Id.
"""
from __future__ import annotations

import contextvars
import logging
import random
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from gateway.core import metrics
from gateway.core.metrics import on_commit_inc
from gateway.core.signing import webhook_signature
from webhooks import transport, writes
from webhooks.locks import deliveries_due_lock, deliveries_lock
from webhooks.models import TEST_EVENT_TYPE, WebhookDelivery, WebhookDeliveryAttempt
from webhooks.state import ensure_transition

logger = logging.getLogger("webhooks")

D = WebhookDelivery.Status

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
    writes.deliveries_claims_write(deliveries)
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
    # A delivery's own address came with an API request (S2S webhookUrl): it is checked as one
    # at every attempt, never allowed onto a private network, whatever staging allows staff.
    return transport.post(url, body, headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
                          from_request=bool(delivery.url)), signature


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


# Where a failed attempt's retry message goes: given (delivery id, seconds to wait), it queues
# an attempt (webhooks.tasks); None, and the due-deliveries sweep finds the retry when it is due.
RetryQueue = Callable[[int, float], object]


# A delivery's status after an attempt, as the metric names the attempt's outcome.
_OUTCOMES = {"delivered": "delivered", "failed": "retry", "dead": "dead"}


def delivery_status_set(delivery: WebhookDelivery, target: str, **fields) -> None:
    """The one way a delivery's status changes: checked against webhooks.state.TRANSITIONS,
    then set with the fields that go with it (the caller holds the row's lock and writes it)."""
    ensure_transition(delivery.status, target)
    delivery.status = target
    for name, value in fields.items():
        setattr(delivery, name, value)


@transaction.atomic
def _deliveries_results_record(outcomes: list[tuple[Claim, transport.Result, str]], *,
                               retry_queue: RetryQueue | None = None) -> list[WebhookDelivery]:
    """Record the attempts' results and decide what comes next for each delivery (delivered,
    retried later or dead), in one transaction. A retry due within COUNTDOWN_MAX_SECONDS is
    handed to `retry_queue` once that commits. Returns the deliveries as they now are."""
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
        if delivery.status == D.DELIVERED:
            continue  # an earlier (or overlapping) attempt was acknowledged already
        if result.ok:
            delivery_status_set(delivery, D.DELIVERED, delivered_at=now, next_attempt_at=None, claim_token="")
        elif delivery.claim_token != claim.token:
            # Our claim ran out and another worker holds the delivery: its result will decide.
            continue
        else:
            delay = retry_delay(delivery.cycle_attempts, event_type=delivery.event.event_type)
            if delay is None:
                delivery_status_set(delivery, D.DEAD, next_attempt_at=None, claim_token="")
            else:
                delivery_status_set(delivery, D.FAILED, next_attempt_at=now + timedelta(seconds=delay), claim_token="")
                if delay <= COUNTDOWN_MAX_SECONDS and retry_queue is not None:
                    # A little late rather than early: a task that runs before next_attempt_at
                    # finds nothing due and the retry waits for the sweep.
                    transaction.on_commit(partial(retry_queue, delivery.pk, delay + 0.2))
        delivery.updated_at = now
        changed.append(delivery)
        on_commit_inc(metrics.webhook_deliveries.labels(_OUTCOMES[delivery.status]))
    writes.attempts_results_write(attempts, changed)
    return out


def _attempt_all(claims: list[Claim], retry_queue: RetryQueue | None) -> list[WebhookDelivery]:
    results = _send_all(claims)
    return _deliveries_results_record([(claim, result, signature)
                                       for claim, (result, signature) in zip(claims, results)],
                                      retry_queue=retry_queue)


def delivery_attempt_run(delivery_id: int, *, retry_queue: RetryQueue | None = None) -> WebhookDelivery | None:
    """Make one attempt of the delivery if it is due and nobody else holds it; returns the
    delivery after the attempt, or None when there was nothing to do. A failure's soon retry
    goes to `retry_queue` (the module's docstring)."""
    claims = _deliveries_claim([delivery_id], limit=1)
    return _attempt_all(claims, retry_queue)[0] if claims else None


def deliveries_attempt_run(delivery_ids: list[int], *, retry_queue: RetryQueue | None = None) -> int:
    """One attempt of each of these deliveries that is due and that nobody else holds, all at
    once. Returns how many were attempted."""
    done = 0
    for start in range(0, len(delivery_ids), BATCH_SIZE):
        claims = _deliveries_claim(delivery_ids[start:start + BATCH_SIZE], limit=BATCH_SIZE)
        if claims:
            _attempt_all(claims, retry_queue)
            done += len(claims)
    return done


def deliveries_due_process(*, max_deliveries: int = SWEEP_MAX_DELIVERIES,
                           budget_seconds: float = SWEEP_BUDGET_SECONDS, retry_queue: RetryQueue | None = None) -> int:
    """Attempt due deliveries, most overdue first, a batch at a time, until none is due or the
    budget is spent. Returns how many were attempted. Safe to run concurrently."""
    started = time.monotonic()
    done = 0
    while done < max_deliveries and time.monotonic() - started < budget_seconds:
        claims = _deliveries_claim(limit=min(BATCH_SIZE, max_deliveries - done))
        if not claims:
            break
        _attempt_all(claims, retry_queue)
        done += len(claims)
    return done
