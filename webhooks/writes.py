"""The webhook outbox's bulk writes, through the performance layer (gateway.perf.sql): the one
module of this app that uses it. Each function is a domain verb over model instances; no type
of the performance layer goes in or out. Call them inside the caller's transaction."""
from __future__ import annotations

from gateway.perf import sql
from webhooks.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent

# What claiming a delivery changes (webhooks.delivery), and what an attempt's result does.
CLAIM_FIELDS = ["claim_token", "next_attempt_at", "attempts", "cycle_attempts", "last_attempt_at", "updated_at"]
ATTEMPT_RESULT_FIELDS = ["finished_at", "duration_ms", "http_status", "response_snippet", "error",
                         "signature_header", "outcome"]
DELIVERY_RESULT_FIELDS = ["status", "delivered_at", "next_attempt_at", "claim_token", "updated_at"]


def events_insert(events: list[WebhookEvent], deliveries: list[WebhookDelivery]) -> None:
    """Insert the events, then their deliveries: one statement each."""
    sql.insert_rows(WebhookEvent, events)
    sql.insert_rows(WebhookDelivery, deliveries)


def deliveries_claims_write(deliveries: list[WebhookDelivery]) -> None:
    """Write the claims taken on these (locked) deliveries: one statement."""
    sql.update_rows(WebhookDelivery, deliveries, CLAIM_FIELDS)


def attempts_results_write(attempts: list[WebhookDeliveryAttempt], deliveries: list[WebhookDelivery]) -> None:
    """Write the attempts' results and what they decided for their (locked) deliveries: one
    statement each."""
    sql.update_rows(WebhookDeliveryAttempt, attempts, ATTEMPT_RESULT_FIELDS)
    sql.update_rows(WebhookDelivery, deliveries, DELIVERY_RESULT_FIELDS)
