"""Every read of disputes. A merchant's reads are scoped to that merchant: another merchant's
dispute is simply not found. The console's reads (every merchant) are at the end."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from gateway.core.errors import NotFound
from gateway.platform.models import Merchant
from payments.models import Payment
from refunds.models import Dispute

S = Dispute.Status
# A dispute answered neither way this long before respond_by raises the deadline alert, checked
# every minute by the beat ("disputes-deadlines"); ALERT_MARGIN more, so that a check a few
# minutes late still fires it 48 hours ahead.
ALERT_BEFORE = timedelta(hours=48)
ALERT_MARGIN = timedelta(minutes=10)
ALERT_WINDOW = ALERT_BEFORE + ALERT_MARGIN


def dispute_due_soon(dispute: Dispute, now: datetime) -> bool:
    """Whether the dispute still awaits the merchant's answer and is within ALERT_WINDOW of
    respond_by: the deadline alert's condition (with no alert fired yet) and the console's
    "due soon". disputes_due_for_alert and disputes_at_risk ask the same in SQL."""
    return (dispute.status in Dispute.ANSWERABLE_STATUSES and dispute.respond_by is not None
            and dispute.respond_by <= now + ALERT_WINDOW)


def dispute_get_for_merchant(*, merchant: Merchant, dispute_id: str) -> Dispute:
    """The merchant's dispute by disputeId. Raises NotFound for another merchant's dispute
    exactly as for one that does not exist."""
    dispute = (Dispute.objects.select_related("merchant", "payment")
               .filter(merchant=merchant, dispute_id=dispute_id).first())
    if dispute is None:
        raise NotFound(f"no dispute {dispute_id}")
    return dispute


@dataclass(frozen=True)
class DisputePage:
    disputes: list[Dispute]
    total: int


def _day_start(day: date) -> datetime:
    """00:00 of `day` in settings.TIME_ZONE (Asia/Kolkata): the merchant's calendar day."""
    return datetime.combine(day, time.min, tzinfo=timezone.get_default_timezone())


def disputes_page_for_merchant(*, merchant: Merchant, status: str | None = None, from_day: date | None = None,
                               to_day: date | None = None, payment: Payment | None = None, page: int = 0,
                               size: int = 20) -> DisputePage:
    """One page of the merchant's disputes, newest first, by status, payment and the
    Asia/Kolkata day they reached the gateway (both days included)."""
    queryset = Dispute.objects.filter(merchant=merchant)
    if payment is not None:
        queryset = queryset.filter(payment=payment)
    if status is not None:
        queryset = queryset.filter(status=status)
    if from_day is not None:
        queryset = queryset.filter(created_at__gte=_day_start(from_day))
    if to_day is not None:
        queryset = queryset.filter(created_at__lt=_day_start(to_day + timedelta(days=1)))
    offset = page * size
    found = list(queryset.select_related("merchant", "payment").order_by("-created_at", "-id")[offset:offset + size])
    total = offset + len(found) if (found and len(found) < size) or (not found and offset == 0) else queryset.count()
    return DisputePage(found, total)


def payment_open_dispute(payment: Payment) -> Dispute | None:
    """The payment's newest dispute not yet decided, if any (the enquiry shows it)."""
    return (Dispute.objects.select_related("merchant", "payment").filter(payment=payment)
            .exclude(status__in=Dispute.FINAL_STATUSES).order_by("-created_at", "-id").first())


def payment_disputed_debit(payment: Payment) -> int:
    """Paise taken back from the payment by disputes lost or accepted: no refund may return it
    again (refunds.selectors.refundable_amount). Exact under the payment's lock."""
    return (Dispute.objects.filter(payment=payment, status__in=Dispute.DEBITED_STATUSES)
            .aggregate(total=Sum("amount"))["total"] or 0)


def dispute_for_processor(*, acquirer: str, processor_id: str) -> Dispute | None:
    return Dispute.objects.filter(acquirer=acquirer, processor_dispute_id=processor_id).first()


def disputes_awaiting(*, limit: int = 200) -> list[Dispute]:
    """Disputes the merchant has still to answer, the least time left first (no deadline last)."""
    return list(Dispute.objects.select_related("merchant", "payment")
                .filter(status__in=Dispute.ANSWERABLE_STATUSES)
                .order_by(F("respond_by").asc(nulls_last=True), "id")[:limit])


def disputes_awaiting_count() -> int:
    return Dispute.objects.filter(status__in=Dispute.ANSWERABLE_STATUSES).count()


def disputes_due_for_alert(*, now: datetime) -> list[int]:
    """Pks of disputes within ALERT_WINDOW of respond_by, answered neither way, not alerted yet."""
    return list(Dispute.objects.filter(status__in=Dispute.ANSWERABLE_STATUSES, deadline_alerted_at__isnull=True,
                                       respond_by__isnull=False, respond_by__lte=now + ALERT_WINDOW)
                .order_by("respond_by", "id").values_list("pk", flat=True))


def disputes_at_risk(*, now: datetime) -> dict:
    """For the dashboard and the metric: disputes not decided, their amount, and how many are
    within ALERT_WINDOW of their deadline with no answer."""
    # One read of the undecided disputes (every minute, from the deadline check), not two.
    due = Q(status__in=Dispute.ANSWERABLE_STATUSES, respond_by__isnull=False, respond_by__lte=now + ALERT_WINDOW)
    totals = (Dispute.objects.exclude(status__in=Dispute.FINAL_STATUSES)
              .aggregate(count=Count("id"), amount=Sum("amount"), due=Count("id", filter=due)))
    return {"open": totals["count"] or 0, "amount": totals["amount"] or 0, "due_soon": totals["due"] or 0}


def disputes_stale(*, synced_before: datetime, limit: int) -> list[int]:
    """Pks of disputes not decided whose processor's word was last read before `synced_before`,
    the longest unread first (the sweep reads them again)."""
    return list(Dispute.objects.exclude(status__in=Dispute.FINAL_STATUSES)
                .filter(Q(synced_at__isnull=True) | Q(synced_at__lt=synced_before))
                .order_by(F("synced_at").asc(nulls_first=True), "id").values_list("pk", flat=True)[:limit])


def payments_to_ask_about_disputes(*, after_pk: int, completed_since: datetime, limit: int) -> list[Payment]:
    """Successful payments completed since `completed_since`, by pk after `after_pk`: the
    sweep's next batch to ask the acquirer about."""
    return list(Payment.objects.filter(status=Payment.Status.SUCCESS, completed_at__gte=completed_since,
                                       pk__gt=after_pk).order_by("pk")[:limit])


def disputes_with_events(*, payment: Payment) -> list[Dispute]:
    """The payment's disputes, oldest first, with their stories (the console's payment story)."""
    return list(Dispute.objects.filter(payment=payment).prefetch_related("events").order_by("created_at", "id"))


def dispute_by_id(dispute_id: str) -> Dispute | None:
    """Any merchant's dispute by disputeId (the console's page)."""
    return Dispute.objects.select_related("merchant", "payment").filter(dispute_id=dispute_id).first()


def disputes_not_awaiting(*, limit: int = 100) -> list[Dispute]:
    """Disputes under review or decided, the latest changed first (the console's second list)."""
    return list(Dispute.objects.select_related("merchant", "payment")
                .exclude(status__in=Dispute.ANSWERABLE_STATUSES).order_by("-updated_at", "-id")[:limit])
