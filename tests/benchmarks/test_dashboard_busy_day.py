"""The dashboard benchmark's busy day (benchmarks/dashboard.py) is a day the gateway could have
had: payments of the fill's merchants, methods and statuses spread over the last 24 hours, the
newest hosted sessions still open, every row valid; and the dashboard counts it exactly."""
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks.bigdata import Size, fill
from benchmarks.dashboard import busy_day
from gateway.console import buckets
from gateway.console.dashboard import WINDOW
from payments.models import Payment
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db


def test_a_busy_day_is_valid_spread_over_the_day_and_counted_exactly():
    make_merchant(code="BENCH")
    fill(Size(3000, merchants=5), merchant_code="BENCH", vacuum=False)
    now = timezone.now()
    assert busy_day(1200, vacuum=False)["added"] == 1200
    day = Payment.objects.filter(merchant_txn_id__startswith="DAY-")
    assert day.filter(created_at__gte=now - timedelta(hours=24), created_at__lte=timezone.now()).count() == 1200
    # Every hour of the day has its share; the last half hour holds open hosted sessions.
    hours = Counter(int((now - created).total_seconds() // 3600) for created in day.values_list("created_at", flat=True))
    assert set(hours) <= set(range(25)) and min(hours[h] for h in range(24)) >= 40
    assert day.filter(status=Payment.Status.PENDING, flow=Payment.Flow.HOSTED, payment_mode="").exists()
    assert not day.filter(status__in=[Payment.Status.PENDING, Payment.Status.PROCESSING],
                          created_at__lt=now - timedelta(minutes=31)).exists()
    for payment in day.order_by("?")[:50]:
        payment.full_clean(validate_constraints=False)
    assert not day.filter(status=Payment.Status.SUCCESS, bank_rrn="").exists()

    buckets.dashboard_buckets_fold()
    shown = sum(n for _, _, _, n in buckets.payment_outcomes(since=now - WINDOW))
    assert shown == Payment.objects.filter(created_at__gte=now - WINDOW).count()
