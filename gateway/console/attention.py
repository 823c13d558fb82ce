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
- Disputes awaiting the merchant's answer, the least time left first (those within 48 h of
  respond_by are the deadline alert's): answered (accepted, evidence sent) or decided, a dispute
  leaves the queue. docs/disputes.md.

Each list is the oldest first, at most LIST_LIMIT rows, with the count of all.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from payments import selectors as payment_selectors
from refunds import selectors as refund_selectors
import refunds.disputes.selectors as dispute_selectors
from webhooks import selectors as webhook_selectors

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
    return [
        Section("disputes-due", "Disputes awaiting an answer, least time left first",
                dispute_selectors.disputes_awaiting(limit=LIST_LIMIT),
                dispute_selectors.disputes_awaiting_count()),
        _section("reversals-failed", "Late approvals the acquirer refused to reverse: give the money back by hand",
                 payment_selectors.reversals_failed()),
        _section("reversals-pending", "Late approvals being reversed", payment_selectors.reversals_pending()),
        _section("refunds-stuck", f"Refunds flagged for review or open over {_hours(REFUND_STUCK_AFTER)}",
                 refund_selectors.refunds_stuck(created_before=now - REFUND_STUCK_AFTER)),
        _section("webhooks-dead", f"Webhook deliveries dead in the last {DEAD_WINDOW.days} days",
                 webhook_selectors.deliveries_dead_since(since=now - DEAD_WINDOW)),
        _section("reversals-done", f"Late approvals given back in the last {REVERSED_RECENTLY.days} days",
                 payment_selectors.reversals_done_since(since=now - REVERSED_RECENTLY)),
    ]


def _hours(delta: timedelta) -> str:
    hours = int(delta.total_seconds() // 3600)
    return "an hour" if hours == 1 else f"{hours} hours"
