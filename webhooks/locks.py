"""The one place webhook rows are locked. Call these inside transaction.atomic()."""
from __future__ import annotations

from django.utils import timezone

from webhooks.models import WebhookDelivery


def delivery_lock(delivery_id: int) -> WebhookDelivery:
    # Serialises everything that decides a delivery's state after the fact: recording an
    # attempt's result, and a resend, so neither overwrites the other.
    return WebhookDelivery.objects.select_for_update(of=("self",)).select_related("event", "merchant").get(
        pk=delivery_id)


def delivery_due_lock(delivery_id: int | None = None) -> WebhookDelivery | None:
    """The given delivery, or the most overdue one, if it is due and no one else holds its row."""
    due = deliveries_due_lock([delivery_id] if delivery_id is not None else None, limit=1)
    return due[0] if due else None


def deliveries_due_lock(delivery_ids: list[int] | None = None, *, limit: int) -> list[WebhookDelivery]:
    """Up to `limit` of the given deliveries (or the most overdue ones) that are due and that no
    one else holds."""
    # skip_locked: two workers racing for the same delivery (the on_commit task and the sweep,
    # a redelivered message, two sweeps) must not both send it; the loser sees nothing due.
    due = (WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
           .select_related("event", "merchant")
           .filter(status__in=WebhookDelivery.DUE_STATUSES, next_attempt_at__lte=timezone.now()))
    if delivery_ids is not None:
        due = due.filter(pk__in=delivery_ids)
    return list(due.order_by("next_attempt_at", "pk")[:limit])


def deliveries_lock(delivery_ids: list[int]) -> list[WebhookDelivery]:
    # delivery_lock for many at once, in id order, so that two workers recording results
    # never wait on each other in opposite orders.
    return list(WebhookDelivery.objects.select_for_update(of=("self",)).select_related("event", "merchant")
                .filter(pk__in=delivery_ids).order_by("pk"))

