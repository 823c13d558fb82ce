"""How long webhook history is kept (gateway.platform.retention has the table of every kind of row).

An event, its deliveries and their attempts (status codes, response snippets, errors) are what
support reads when a merchant asks "did you tell us?": kept WEBHOOK_HISTORY_RETENTION, the
question's useful life, then deleted together. An event with a delivery still due is kept
whatever its age."""
from __future__ import annotations

from datetime import timedelta

from django.db.models import Exists, OuterRef
from django.utils import timezone

from gateway.platform.retention import delete_in_batches
from webhooks.models import WebhookDelivery, WebhookEvent

WEBHOOK_HISTORY_RETENTION = timedelta(days=180)


def webhook_history_delete_old(*, now=None) -> int:
    """Webhook events older than WEBHOOK_HISTORY_RETENTION none of whose deliveries is still
    due, with their deliveries and attempts. Returns how many events were deleted."""
    cutoff = (now or timezone.now()) - WEBHOOK_HISTORY_RETENTION
    # NOT EXISTS, an anti-join: PostgreSQL may run "NOT IN (the due deliveries)" as a subquery
    # read again for every old event when it does not hash it, and a backlog of old events
    # times a backlog of due deliveries is a sweep that never ends (issue 30).
    due = WebhookDelivery.objects.filter(event=OuterRef("pk"), status__in=WebhookDelivery.DUE_STATUSES)
    return delete_in_batches(WebhookEvent.objects.filter(created_at__lt=cutoff).exclude(Exists(due)))
