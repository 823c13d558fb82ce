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
    # skip_locked: two workers racing for the same delivery (the on_commit task and the sweep,
    # a redelivered message, two sweeps) must not both send it; the loser sees nothing due.
    due = (WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
           .select_related("event", "merchant")
           .filter(status__in=WebhookDelivery.DUE_STATUSES, next_attempt_at__lte=timezone.now()))
    if delivery_id is not None:
        return due.filter(pk=delivery_id).first()
    return due.order_by("next_attempt_at", "pk").first()

