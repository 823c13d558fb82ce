"""The console's "Needs attention" queue: what support (and finance) must act on, in one place.

- Late approvals being reversed: money the acquirer approved for a payment that could not take
  it, on its way back by itself (payments.services.reversals). Shown so that support can answer
  the customer who calls; one whose reversal keeps failing to reach the acquirer is marked.
- Reversals the acquirer refused: a person must give the money back, then record how
  (finance: SETTLE_REVERSAL), which takes it off the queue.
- Refunds stuck: flagged for review (the bank never answered), or not final after
  REFUND_STUCK_AFTER.
- Dead webhooks: deliveries whose retries ran out in the last DEAD_WINDOW (resend one from its
  page; a resent delivery leaves the queue).

Each list is the oldest first, at most LIST_LIMIT rows, with the count of all.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from payments.models import Reversal
from refunds.models import Refund
from webhooks.models import WebhookDelivery

LIST_LIMIT = 50
REFUND_STUCK_AFTER = timedelta(hours=1)
DEAD_WINDOW = timedelta(days=30)
# A reversal sent this many times without an answer is marked: the acquirer may be down.
REVERSAL_SENDS_BEFORE_WARNING = 3
REVERSED_RECENTLY = timedelta(days=7)


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    rows: list
    count: int


def _section(key: str, title: str, queryset) -> Section:
    rows = list(queryset[:LIST_LIMIT])
    return Section(key, title, rows, queryset.count() if len(rows) == LIST_LIMIT else len(rows))


def attention_sections(now: datetime | None = None) -> list[Section]:
    now = now or timezone.now()
    reversals = Reversal.objects.select_related("payment", "payment__merchant")
    refunds = Refund.objects.select_related("payment", "merchant").exclude(status__in=Refund.FINAL_STATUSES)
    stuck_refunds = refunds.filter(needs_review=True) | refunds.filter(created_at__lt=now - REFUND_STUCK_AFTER)
    return [
        _section("reversals-failed", "Late approvals the acquirer refused to reverse: give the money back by hand",
                 reversals.filter(status=Reversal.Status.FAILED).order_by("created_at", "pk")),
        _section("reversals-pending", "Late approvals being reversed",
                 reversals.filter(status=Reversal.Status.PENDING).order_by("created_at", "pk")),
        _section("refunds-stuck", f"Refunds flagged for review or open over {_hours(REFUND_STUCK_AFTER)}",
                 stuck_refunds.order_by("created_at", "pk")),
        _section("webhooks-dead", f"Webhook deliveries dead in the last {DEAD_WINDOW.days} days",
                 WebhookDelivery.objects.select_related("event", "merchant")
                 .filter(status=WebhookDelivery.Status.DEAD, created_at__gte=now - DEAD_WINDOW)
                 .order_by("created_at", "pk")),
        _section("reversals-done", f"Late approvals given back in the last {REVERSED_RECENTLY.days} days",
                 reversals.filter(status__in=Reversal.FINAL_STATUSES, completed_at__gte=now - REVERSED_RECENTLY)
                 .order_by("-completed_at", "-pk")),
    ]


def _hours(delta: timedelta) -> str:
    hours = int(delta.total_seconds() // 3600)
    return "an hour" if hours == 1 else f"{hours} hours"
