"""Reads of the webhook log for the support console (gateway.console), which never reads
webhooks' models itself. Staff see every merchant: these are not scoped to one."""
from __future__ import annotations

from django.db.models import Count, Min, OuterRef, Prefetch, Q, Subquery

from gateway.platform.models import Merchant
from webhooks.models import TEST_EVENT_TYPE, WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent

D = WebhookDelivery.Status


def deliveries_due_count(*, now, cap: int = 100_000) -> int:
    """How many deliveries are due at `now` (pending or failed, next attempt passed), counted up
    to `cap` so that a huge backlog costs a bounded read."""
    return (WebhookDelivery.objects.filter(status__in=WebhookDelivery.DUE_STATUSES, next_attempt_at__lte=now)
            .order_by()[:cap].count())


def deliveries_dead_since(*, since):
    """Deliveries whose retries ran out, recorded since `since`, oldest first."""
    return (WebhookDelivery.objects.select_related("event", "merchant")
            .filter(status=D.DEAD, created_at__gte=since).order_by("created_at", "pk"))


def event_subject_ids(event_id: str) -> list[str]:
    """The subject (a sabpaisaTxnId or refundId) of the event `event_id`: one primary-key lookup."""
    return list(WebhookEvent.objects.filter(pk=event_id).values_list("subject_id", flat=True))


def events_with_deliveries(*, merchant_id: int, subject_ids: list[str]) -> list[WebhookEvent]:
    """The merchant's events about any of `subject_ids`, oldest first, each with its deliveries
    (oldest first) and their attempts (by number), in three queries."""
    attempts = Prefetch("attempt_rows", queryset=WebhookDeliveryAttempt.objects.order_by("number"))
    deliveries = Prefetch("deliveries", queryset=WebhookDelivery.objects.select_related("merchant")
                          .order_by("created_at", "id").prefetch_related(attempts))
    return list(WebhookEvent.objects.filter(merchant_id=merchant_id, subject_id__in=subject_ids)
                .order_by("created_at").prefetch_related(deliveries))


def webhook_health_rows(*, dead_since) -> list[tuple]:
    """Per merchant with a webhook address or anything in flight, test events left out:
    (merchant, deliveries waiting for their first attempt, deliveries between retries,
    deliveries dead since `dead_since`, the oldest one still due or None, the last delivered
    time or None), by merchant code."""
    # Test events (sent from the console to try an address) say nothing about how the merchant's
    # real webhooks fare: one failed test, never retried, would mark it failing for 7 days.
    real = WebhookDelivery.objects.exclude(event__event_type=TEST_EVENT_TYPE)
    due = (real.filter(status__in=WebhookDelivery.DUE_STATUSES).order_by()
           .values("merchant").annotate(pending=Count("id", filter=Q(status=D.PENDING)),
                                        retrying=Count("id", filter=Q(status=D.FAILED)),
                                        oldest=Min("created_at")))
    due_by_merchant = {row["merchant"]: row for row in due}
    # Counted once for all merchants through the dead deliveries' partial index
    # (webhook_delivery_dead), not per merchant: a count per merchant read each merchant's
    # week of deliveries to find its few dead ones (1.1 s at 3 million deliveries, issue 30).
    dead = dict(real.filter(status=D.DEAD, created_at__gte=dead_since).order_by()
                .values("merchant").annotate(n=Count("id")).values_list("merchant", "n"))
    mine = real.filter(merchant=OuterRef("pk"))
    merchants = (
        # Only what the dashboard shows: a thousand merchants' whole rows (secrets, settings) cost
        # more to load than the statement takes.
        Merchant.objects.filter(Q(pk__in=list(due_by_merchant)) | ~Q(webhook_url="")).only("pk", "code")
        .annotate(last_success=Subquery(mine.filter(status=D.DELIVERED).order_by("-created_at")
                                        .values("delivered_at")[:1]))
        .order_by("code")
    )
    rows = []
    for merchant in merchants:
        row = due_by_merchant.get(merchant.pk, {})
        rows.append((merchant, row.get("pending", 0), row.get("retrying", 0), dead.get(merchant.pk, 0),
                     row.get("oldest"), merchant.last_success))
    return rows
