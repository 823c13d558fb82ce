"""What the operations dashboard reads. Every query is bounded by an index: the last 24 hours
of payments (the summary of gateway.console.buckets, its open payments by primary key and the
rest through created_at: a busy day costs milliseconds, not a read of every payment), open
deliveries (the outbox's partial index), each merchant's recent deliveries (merchant,
created_at), open payments past their expiry and refunds still pending (both partial indexes). Lists are cut at LIST_LIMIT rows and counted up to COUNT_CAP.

Thresholds (docs/console.md):
- a payment is stuck when it is PENDING or PROCESSING more than STUCK_AFTER_EXPIRY past its
  expires_at (the expiry sweep runs every EXPIRY_SWEEP_SECONDS, from the beat schedule, so
  this never happens while beat and the workers run);
- a refund is late when it is PENDING longer than REFUND_PENDING_ALERT (the bank answers the
  sandbox at once and the pending sweep retries every minute);
- dead deliveries are counted over DEAD_WINDOW;
- a merchant's webhooks are "backlog" when a delivery has been due for longer than
  BACKLOG_AFTER (the workers send a new delivery within seconds).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from gateway.console import buckets, charts
from gateway.console.kit.days import local
from gateway.console.kit.display import method_label
from gateway.platform.models import Merchant
from payments import selectors as payment_selectors
from refunds import selectors as refund_selectors
from webhooks import selectors as webhook_selectors

WINDOW = timedelta(hours=24)
STUCK_AFTER_EXPIRY = timedelta(minutes=getattr(settings, "CONSOLE_STUCK_PAYMENT_MINUTES", 2))
REFUND_PENDING_ALERT = timedelta(minutes=getattr(settings, "CONSOLE_REFUND_PENDING_ALERT_MINUTES", 15))
DEAD_WINDOW = timedelta(days=7)
# A delivery still due this long after it was recorded means the workers are behind or down.
BACKLOG_AFTER = timedelta(minutes=5)
# Read from the beat schedule, so the dashboard's words cannot drift from what beat does.
_EXPIRY_SWEEP = settings.CELERY_BEAT_SCHEDULE["payments-expire"]["schedule"]
# A Celery schedule (gateway.core.phases.every) or, in a settings override, a number of seconds.
EXPIRY_SWEEP_SECONDS = getattr(_EXPIRY_SWEEP, "seconds", _EXPIRY_SWEEP)
LIST_LIMIT = 20
COUNT_CAP = 1000


@dataclass
class MethodStats:
    method: str
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    expired: int = 0
    open: int = 0

    @property
    def finished(self) -> int:
        return self.succeeded + self.failed + self.expired

    @property
    def success_rate(self) -> float | None:
        """Of the payments that reached a final status, the share that succeeded."""
        return self.succeeded / self.finished if self.finished else None


@dataclass
class WebhookHealth:
    merchant: Merchant
    pending: int
    retrying: int
    dead: int
    oldest_due: datetime | None
    last_success: datetime | None
    now: datetime

    @property
    def state(self) -> str:
        if self.dead:
            return "failing"
        if self.retrying:
            return "retrying"
        if self.oldest_due and self.oldest_due < self.now - BACKLOG_AFTER:
            return "backlog"
        return "healthy"


def _capped_count(queryset) -> int:
    return queryset[:COUNT_CAP + 1].count()


def payments_by_method(rows) -> list[MethodStats]:
    """`rows` (gateway.console.buckets.payment_outcomes) by method and outcome."""
    outcomes = {"SUCCESS": "succeeded", "FAILED": "failed", "EXPIRED": "expired"}
    stats: dict[str, MethodStats] = {}
    for _, mode, status, n in rows:
        method = method_label(mode)
        entry = stats.setdefault(method, MethodStats(method))
        entry.total += n
        outcome = outcomes.get(status, "open")
        setattr(entry, outcome, getattr(entry, outcome) + n)
    return sorted(stats.values(), key=lambda entry: (-entry.total, entry.method))


def payments_by_hour(rows, now: datetime) -> list[tuple[str, int, int]]:
    """(hour label in IST, payments created, of which succeeded) for each of the last 24 hours.
    A five-minute bucket lies inside one IST hour (IST is UTC+05:30)."""
    by_hour: dict[datetime, list[int]] = {}
    hours: dict[datetime, datetime] = {}  # a bucket's IST hour, worked out once per bucket
    for start, _, status, n in rows:
        if start not in hours:
            hours[start] = local(start).replace(minute=0, second=0, microsecond=0)
        counts = by_hour.setdefault(hours[start], [0, 0])
        counts[0] += n
        counts[1] += n if status == "SUCCESS" else 0
    first = local(now - WINDOW).replace(minute=0, second=0, microsecond=0)
    points = []
    for step in range(25):
        hour = first + timedelta(hours=step)
        if hour > local(now):
            break
        total, ok = by_hour.get(hour, (0, 0))
        points.append((f"{hour:%H}:00", total, ok))
    return points


def webhook_health(now: datetime) -> list[WebhookHealth]:
    """Per merchant with a webhook address or anything in flight, test events left out:
    deliveries waiting for their
    first attempt, deliveries between retries, deliveries dead in the last 7 days, the oldest
    one still due and the last one delivered. Worst first."""
    rows = webhook_selectors.webhook_health_rows(dead_since=now - DEAD_WINDOW)
    health = [WebhookHealth(*row, now) for row in rows]
    order = {"failing": 0, "backlog": 1, "retrying": 2, "healthy": 3}
    return sorted(health, key=lambda item: (order[item.state], item.merchant.code))


def stuck_payments(now: datetime):
    queryset = payment_selectors.payments_open_past_expiry(expired_before=now - STUCK_AFTER_EXPIRY)
    rows = list(queryset[:LIST_LIMIT])
    return rows, (_capped_count(queryset) if len(rows) == LIST_LIMIT else len(rows))


def late_refunds(now: datetime):
    queryset = refund_selectors.refunds_initiated_before(created_before=now - REFUND_PENDING_ALERT)
    rows = list(queryset[:LIST_LIMIT])
    return rows, (_capped_count(queryset) if len(rows) == LIST_LIMIT else len(rows))


def dashboard_context(now: datetime | None = None) -> dict:
    now = now or timezone.now()
    outcomes = buckets.payment_outcomes(since=now - WINDOW)
    methods = payments_by_method(outcomes)
    total = sum(entry.total for entry in methods)
    succeeded = sum(entry.succeeded for entry in methods)
    finished = sum(entry.finished for entry in methods)
    stuck, stuck_count = stuck_payments(now)
    late, late_count = late_refunds(now)
    rows = [charts.StackedRow(entry.method, (
        charts.Segment("succeeded", entry.succeeded, charts.SUCCESS),
        charts.Segment("failed", entry.failed, charts.FAILED),
        charts.Segment("expired", entry.expired, charts.EXPIRED),
        charts.Segment("open", entry.open, charts.OPEN))) for entry in methods]
    return {
        "now": now,
        "methods": methods,
        "totals": {"payments": total, "succeeded": succeeded, "finished": finished, "open": total - finished,
                   "success_rate_text": f"{succeeded / finished:.1%}" if finished else "—"},
        "method_chart": charts.stacked_bars(rows, title="Payments by method and outcome, last 24 hours"),
        "rate_chart": charts.rate_bars([(entry.method, entry.success_rate, entry.finished) for entry in methods],
                                       title="Success rate by method, last 24 hours"),
        "hour_chart": charts.column_chart(payments_by_hour(outcomes, now), title="Payments per hour (IST), last 24 hours"),
        "webhooks": webhook_health(now),
        "expiry_sweep_text": (f"every {EXPIRY_SWEEP_SECONDS:g} s" if EXPIRY_SWEEP_SECONDS != 1 else "every second"),
        "stuck": stuck, "stuck_count": stuck_count, "stuck_after_minutes": int(STUCK_AFTER_EXPIRY.total_seconds() // 60),
        "late_refunds": late, "late_refunds_count": late_count,
        "refund_alert_minutes": int(REFUND_PENDING_ALERT.total_seconds() // 60),
        "dead_window_days": DEAD_WINDOW.days,
        "backlog_minutes": int(BACKLOG_AFTER.total_seconds() // 60),
        "count_cap": COUNT_CAP,
        "fold_minutes": int(buckets.FOLD_MARGIN.total_seconds() // 60),
        "bucket_minutes": int(buckets.WIDTH.total_seconds() // 60),
    }
