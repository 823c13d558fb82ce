"""What the operations dashboard reads. Every query is bounded by an index: the last 24 hours
of payments (created_at), open deliveries (the outbox's partial index), each merchant's recent
deliveries (merchant, created_at), open payments past their expiry and refunds still pending
(both partial indexes). Lists are cut at LIST_LIMIT rows and counted up to COUNT_CAP.

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
from django.db.models import Count, IntegerField, Min, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, TruncHour
from django.utils import timezone

from gateway.console import charts
from gateway.console.days import local
from gateway.console.display import method_label
from gateway.platform.models import Merchant
from payments.models import Payment
from refunds.models import Refund
from webhooks.models import TEST_EVENT_TYPE, WebhookDelivery

WINDOW = timedelta(hours=24)
STUCK_AFTER_EXPIRY = timedelta(minutes=getattr(settings, "CONSOLE_STUCK_PAYMENT_MINUTES", 2))
REFUND_PENDING_ALERT = timedelta(minutes=getattr(settings, "CONSOLE_REFUND_PENDING_ALERT_MINUTES", 15))
DEAD_WINDOW = timedelta(days=7)
# A delivery still due this long after it was recorded means the workers are behind or down.
BACKLOG_AFTER = timedelta(minutes=5)
# Read from the beat schedule, so the dashboard's words cannot drift from what beat does.
EXPIRY_SWEEP_SECONDS = settings.CELERY_BEAT_SCHEDULE["payments-expire"]["schedule"]
LIST_LIMIT = 20
COUNT_CAP = 1000

S = Payment.Status
D = WebhookDelivery.Status


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


def payments_by_method(now: datetime) -> list[MethodStats]:
    """Payments created in the last 24 hours, by method and status."""
    stats: dict[str, MethodStats] = {}
    rows = (Payment.objects.filter(created_at__gte=now - WINDOW).order_by()
            .values_list("payment_mode", "status").annotate(n=Count("id")))
    for mode, status, n in rows:
        method = method_label(mode)
        entry = stats.setdefault(method, MethodStats(method))
        entry.total += n
        if status == S.SUCCESS:
            entry.succeeded += n
        elif status == S.FAILED:
            entry.failed += n
        elif status == S.EXPIRED:
            entry.expired += n
        else:
            entry.open += n
    return sorted(stats.values(), key=lambda entry: (-entry.total, entry.method))


def payments_by_hour(now: datetime) -> list[tuple[str, int, int]]:
    """(hour label in IST, payments created, of which succeeded) for each of the last 24 hours."""
    tz = timezone.get_default_timezone()
    rows = (Payment.objects.filter(created_at__gte=now - WINDOW).order_by()
            .annotate(hour=TruncHour("created_at", tzinfo=tz)).values("hour")
            .annotate(total=Count("id"), succeeded=Count("id", filter=Q(status=S.SUCCESS)))
            .values_list("hour", "total", "succeeded"))
    by_hour = {local(hour).replace(minute=0, second=0, microsecond=0): (total, ok) for hour, total, ok in rows}
    first = local(now - WINDOW).replace(minute=0, second=0, microsecond=0)
    points = []
    for step in range(25):
        hour = first + timedelta(hours=step)
        if hour > local(now):
            break
        total, ok = by_hour.get(hour, (0, 0))
        points.append((f"{hour:%H}:00", total, ok))
    return points


def _count_of(queryset) -> Subquery:
    return Coalesce(Subquery(queryset.order_by().values("merchant").annotate(n=Count("id")).values("n"),
                             output_field=IntegerField()), 0)


def webhook_health(now: datetime) -> list[WebhookHealth]:
    """Per merchant with a webhook address or anything in flight, test events left out:
    deliveries waiting for their
    first attempt, deliveries between retries, deliveries dead in the last 7 days, the oldest
    one still due and the last one delivered. Worst first."""
    # Test events (sent from the console to try an address) say nothing about how the merchant's
    # real webhooks fare: one failed test, never retried, would mark it failing for 7 days.
    real = WebhookDelivery.objects.exclude(event__event_type=TEST_EVENT_TYPE)
    due = (real.filter(status__in=WebhookDelivery.DUE_STATUSES).order_by()
           .values("merchant").annotate(pending=Count("id", filter=Q(status=D.PENDING)),
                                        retrying=Count("id", filter=Q(status=D.FAILED)),
                                        oldest=Min("created_at")))
    due_by_merchant = {row["merchant"]: row for row in due}
    mine = real.filter(merchant=OuterRef("pk"))
    merchants = (
        Merchant.objects.filter(Q(pk__in=list(due_by_merchant)) | ~Q(webhook_url=""))
        .annotate(
            dead=_count_of(mine.filter(status=D.DEAD, created_at__gte=now - DEAD_WINDOW)),
            last_success=Subquery(mine.filter(status=D.DELIVERED).order_by("-created_at")
                                  .values("delivered_at")[:1]),
        )
        .order_by("code")
    )
    health = []
    for merchant in merchants:
        row = due_by_merchant.get(merchant.pk, {})
        health.append(WebhookHealth(merchant, row.get("pending", 0), row.get("retrying", 0), merchant.dead,
                                    row.get("oldest"), merchant.last_success, now))
    order = {"failing": 0, "backlog": 1, "retrying": 2, "healthy": 3}
    return sorted(health, key=lambda item: (order[item.state], item.merchant.code))


def stuck_payments(now: datetime):
    queryset = Payment.objects.filter(status__in=[S.PENDING, S.PROCESSING],
                                      expires_at__lt=now - STUCK_AFTER_EXPIRY)
    rows = list(queryset.select_related("merchant").order_by("expires_at")[:LIST_LIMIT])
    return rows, (_capped_count(queryset.order_by("expires_at")) if len(rows) == LIST_LIMIT else len(rows))


def late_refunds(now: datetime):
    queryset = Refund.objects.filter(status=Refund.Status.INITIATED, created_at__lt=now - REFUND_PENDING_ALERT)
    rows = list(queryset.select_related("merchant", "payment").order_by("created_at")[:LIST_LIMIT])
    return rows, (_capped_count(queryset.order_by("created_at")) if len(rows) == LIST_LIMIT else len(rows))


def dashboard_context(now: datetime | None = None) -> dict:
    now = now or timezone.now()
    methods = payments_by_method(now)
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
        "hour_chart": charts.column_chart(payments_by_hour(now), title="Payments per hour (IST), last 24 hours"),
        "webhooks": webhook_health(now),
        "expiry_sweep_text": (f"every {EXPIRY_SWEEP_SECONDS:g} s" if EXPIRY_SWEEP_SECONDS != 1 else "every second"),
        "stuck": stuck, "stuck_count": stuck_count, "stuck_after_minutes": int(STUCK_AFTER_EXPIRY.total_seconds() // 60),
        "late_refunds": late, "late_refunds_count": late_count,
        "refund_alert_minutes": int(REFUND_PENDING_ALERT.total_seconds() // 60),
        "dead_window_days": DEAD_WINDOW.days,
        "backlog_minutes": int(BACKLOG_AFTER.total_seconds() // 60),
        "count_cap": COUNT_CAP,
    }
