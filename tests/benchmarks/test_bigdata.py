"""The big-data fill (benchmarks/bigdata.py) at a tiny size: what it writes must be data the
gateway itself could have written, or the grown benchmark measures a database no deployment
has. Its rows pass the project's own checks: every status history follows the transition
tables, the payments' refund totals are the sums of their refunds (tests/conftest.py checks
that after every test, this one included), webhooks exist exactly for final statuses within
the history's retention, and no row points at a missing parent (the fill skips the foreign
keys' triggers)."""
from collections import defaultdict
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import BooleanField, CheckConstraint, Count, Q, UniqueConstraint
from django.db.models.functions import Coalesce
from django.utils import timezone

from benchmarks.bigdata import Size, fill
from payments.models import Payment, PaymentEvent
from payments.state import TRANSITIONS as PAYMENT_TRANSITIONS
from refunds.models import Refund, RefundEvent
from refunds.selectors import payments_with_refund_totals_off
from refunds.state import TRANSITIONS as REFUND_TRANSITIONS
from webhooks.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent
from webhooks.retention import WEBHOOK_HISTORY_RETENTION
from tests.support.factories import make_merchant

S, R = Payment.Status, Refund.Status
PAYMENTS = 3000

pytestmark = pytest.mark.django_db


@pytest.fixture
def filled():
    merchant = make_merchant(code="BENCH").merchant
    result = fill(Size(PAYMENTS, merchants=5), merchant_code="BENCH", vacuum=False)
    return merchant, result


def test_the_fill_writes_the_sizes_asked_for(filled):
    merchant, result = filled
    counts = result["counts"]
    assert counts["payments_payment"] == PAYMENTS
    assert counts["gateway_merchant"] == 5
    # A tenth of the payments refunded, 0.6 of them with a webhook delivery and its attempts:
    # the proportions of 500,000 refunds and 3 million deliveries to 5 million payments.
    assert 0.08 * PAYMENTS <= counts["refunds_refund"] <= 0.12 * PAYMENTS
    assert 0.45 * PAYMENTS <= counts["webhooks_webhookdelivery"] <= 0.75 * PAYMENTS
    assert counts["webhooks_webhookdeliveryattempt"] > counts["webhooks_webhookdelivery"]
    # The existing merchant holds the largest share, and every merchant some.
    shares = {code: Payment.objects.filter(merchant__code=code).count()
              for code in Payment.objects.values_list("merchant__code", flat=True).distinct()}
    assert len(shares) == 5 and max(shares, key=shares.get) == "BENCH"
    # 18 months, growing: more payments in the last six months than in the first six.
    now = timezone.now()
    last = Payment.objects.filter(created_at__gte=now - timedelta(days=183)).count()
    first = Payment.objects.filter(created_at__lt=now - timedelta(days=365)).count()
    assert last > first > 0
    oldest = Payment.objects.order_by("created_at").first().created_at
    assert timedelta(days=540) < now - oldest < timedelta(days=552)


def rows_breaking(model, constraint) -> int:
    """How many of `model`'s rows break one of its Meta constraints, asked once for the whole
    table: what full_clean's validate_constraints asks once a row (as Q.check does: a NULL
    condition passes), 40 s of queries for the 3,000 payments."""
    rows = model.objects.all()
    if isinstance(constraint, CheckConstraint):
        return rows.filter(~Q(Coalesce(constraint.condition, True, output_field=BooleanField()))).count()
    assert isinstance(constraint, UniqueConstraint) and constraint.fields, constraint
    if constraint.condition is not None:
        rows = rows.filter(constraint.condition)
    rows = rows.filter(**{f"{name}__isnull": False for name in constraint.fields})
    return rows.values(*constraint.fields).annotate(rows=Count("pk")).filter(rows__gt=1).count()


def test_every_payment_history_follows_the_transition_table(filled):
    assert {c.name: rows_breaking(Payment, c) for c in Payment._meta.constraints} == {
        c.name: 0 for c in Payment._meta.constraints}
    events = defaultdict(list)
    for payment_id, kind, from_status, to_status, at in PaymentEvent.objects.order_by("payment_id", "id").values_list(
            "payment_id", "kind", "from_status", "to_status", "created_at"):
        assert kind == PaymentEvent.Kind.STATUS
        events[payment_id].append((from_status, to_status, at))
    for payment in Payment.objects.all():
        payment.full_clean(validate_constraints=False)  # each constraint over every row above
        history = events[payment.pk]
        first = S.PENDING if payment.flow == Payment.Flow.HOSTED else S.PROCESSING
        assert history[0][:2] == ("", first), (payment.sabpaisa_txn_id, history)
        for (_, previous, at_before), (from_status, to_status, at) in zip(history, history[1:]):
            assert from_status == previous and to_status in PAYMENT_TRANSITIONS[from_status], history
            assert at >= at_before
        assert history[-1][1] == payment.status
        assert payment.is_final and payment.completed_at >= payment.created_at
        assert (payment.paid_amount is not None) == (payment.status == S.SUCCESS)
        assert (payment.bank_rrn != "") == (payment.status == S.SUCCESS)


def test_refunds_follow_their_table_and_never_exceed_the_payment(filled):
    assert payments_with_refund_totals_off() == []
    events = defaultdict(list)
    for refund_id, from_status, to_status in RefundEvent.objects.order_by("refund_id", "id").values_list(
            "refund_id", "from_status", "to_status"):
        events[refund_id].append((from_status, to_status))
    committed = defaultdict(int)
    statuses = set()
    for refund in Refund.objects.select_related("payment"):
        refund.full_clean()
        statuses.add(refund.status)
        payment = refund.payment
        assert payment.status == S.SUCCESS and refund.merchant_id == payment.merchant_id
        assert refund.created_at >= payment.completed_at
        history = events[refund.pk]
        assert history[0] == ("", R.INITIATED)
        for (_, previous), (from_status, to_status) in zip(history, history[1:]):
            assert from_status == previous and to_status in REFUND_TRANSITIONS[from_status]
        assert history[-1][1] == refund.status
        assert refund.needs_review == (refund.status == R.INITIATED)
        if refund.status != R.FAILED:
            committed[payment.pk] += refund.amount
            assert committed[payment.pk] <= payment.paid_amount
    assert statuses == {R.SUCCESS, R.FAILED} or statuses == {R.SUCCESS, R.FAILED, R.INITIATED}
    # No two of a merchant's refunds share an instant: the list's order is the time's, not a tie's.
    times = list(Refund.objects.values_list("merchant_id", "created_at"))
    assert len(set(times)) == len(times)


def test_webhooks_exist_exactly_for_final_statuses_within_retention(filled):
    cutoff = timezone.now() - WEBHOOK_HISTORY_RETENTION
    assert not WebhookEvent.objects.filter(created_at__lt=cutoff).exists()
    subjects = defaultdict(list)
    for subject, event_type in WebhookEvent.objects.values_list("subject_id", "event_type"):
        subjects[subject].append(event_type)
    # The fill keeps events from two hours inside the retention window (none is due for the
    # retention sweep yet); a payment completed within that margin may go either way.
    for txn, status, completed in Payment.objects.values_list("sabpaisa_txn_id", "status", "completed_at"):
        if completed >= cutoff + timedelta(hours=3):
            assert subjects[txn] == [f"payment.{status.lower()}"], (txn, status, completed)
        elif completed < cutoff:
            assert subjects[txn] == [], (txn, status, completed)
    for refund_id, status, at in Refund.objects.values_list("refund_id", "status", "updated_at"):
        if status != R.INITIATED and at >= cutoff + timedelta(hours=3):
            assert subjects[refund_id] == ["refund.processed" if status == R.SUCCESS else "refund.failed"]
    for event in WebhookEvent.objects.all()[:200]:
        event.full_clean()
    attempts = defaultdict(list)
    for delivery_id, number, outcome in WebhookDeliveryAttempt.objects.order_by("delivery_id", "number").values_list(
            "delivery_id", "number", "outcome"):
        attempts[delivery_id].append((number, outcome))
    assert WebhookDelivery.objects.count() == WebhookEvent.objects.count()
    for delivery in WebhookDelivery.objects.all():
        rows = attempts[delivery.pk]
        assert [n for n, _ in rows] == list(range(1, delivery.attempts + 1))
        assert delivery.status in (WebhookDelivery.Status.DELIVERED, WebhookDelivery.Status.DEAD)
        assert (rows[-1][1] == "delivered") == (delivery.status == WebhookDelivery.Status.DELIVERED)
        assert all(outcome == "failed" for _, outcome in rows[:-1])


FOREIGN_KEYS = [
    ("payments_payment", "merchant_id", "gateway_merchant"),
    ("payments_paymentevent", "payment_id", "payments_payment"),
    ("refunds_refund", "payment_id", "payments_payment"),
    ("refunds_refund", "merchant_id", "gateway_merchant"),
    ("refunds_refundevent", "refund_id", "refunds_refund"),
    ("webhooks_webhookevent", "merchant_id", "gateway_merchant"),
    ("webhooks_webhookdelivery", "event_id", "webhooks_webhookevent"),
    ("webhooks_webhookdelivery", "merchant_id", "gateway_merchant"),
    ("webhooks_webhookdeliveryattempt", "delivery_id", "webhooks_webhookdelivery"),
]


def test_no_row_points_at_a_missing_parent(filled):
    with connection.cursor() as cur:
        for table, column, parent in FOREIGN_KEYS:
            cur.execute(f"SELECT count(*) FROM {table} c LEFT JOIN {parent} p ON p.id = c.{column} "
                        f"WHERE p.id IS NULL")
            assert cur.fetchone()[0] == 0, f"{table}.{column} points at a missing {parent}"


def test_a_dead_delivery_had_every_attempt_of_the_configured_retry_schedule(settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [10, 60, 300]
    make_merchant(code="BENCH")
    fill(Size(PAYMENTS, merchants=5), merchant_code="BENCH", vacuum=False)
    dead = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.DEAD)
    assert dead.exists()
    assert set(dead.values_list("attempts", flat=True)) == {len(settings.WEBHOOK_RETRY_SCHEDULE) + 1}
