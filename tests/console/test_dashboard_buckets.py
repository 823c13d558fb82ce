"""The dashboard's summary of payments (gateway.console.buckets): whatever the fold has or has not
done, the dashboard's figures equal a direct count over the payments table, a payment that
changes status after its bucket was folded is counted as it is now, in the bucket it was
created in, and the fold never touches the last minutes."""
from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from gateway.console import buckets
from gateway.console.dashboard import WINDOW, dashboard_context
from gateway.console.kit.days import local
from gateway.console.models import DashboardBucket
from payments import selectors
from payments.models import Payment
from payments.services.transitions import payment_expire, payment_mark_failed, payment_mark_succeeded
from tests.support.factories import make_payment, new_rrn

pytestmark = pytest.mark.django_db

URL = "/admin/console/dashboard/"
OPEN = (Payment.Status.PENDING, Payment.Status.PROCESSING)


def made_at(payment: Payment, moment) -> Payment:
    Payment.objects.filter(pk=payment.pk).update(created_at=moment)
    return payment


def direct(since) -> tuple[Counter, Counter]:
    """(count by (mode, status), (created, succeeded) by IST hour) straight from the payments table."""
    by_outcome, by_hour = Counter(), Counter()
    for mode, status, created in Payment.objects.filter(created_at__gte=since).values_list(
            "payment_mode", "status", "created_at"):
        by_outcome[mode, status] += 1
        hour = f"{local(created):%H}:00"
        by_hour[hour, "created"] += 1
        by_hour[hour, "succeeded"] += status == Payment.Status.SUCCESS
    return by_outcome, by_hour


def shown(now) -> tuple[Counter, Counter]:
    """The same, as the dashboard has it (its summary's rows and its hourly chart's figures)."""
    by_outcome = Counter()
    for _, mode, status, n in buckets.payment_outcomes(since=now - WINDOW):
        by_outcome[mode, status] += n
    by_hour = Counter()
    from gateway.console.dashboard import payments_by_hour

    for label, total, ok in payments_by_hour(buckets.payment_outcomes(since=now - WINDOW), now):
        by_hour[label, "created"] += total
        by_hour[label, "succeeded"] += ok
    return +by_outcome, +by_hour


def assert_dashboard_is_exact(now):
    assert shown(now) == tuple(+counter for counter in direct(now - WINDOW))
    context = dashboard_context(now)
    assert context["totals"]["payments"] == Payment.objects.filter(created_at__gte=now - WINDOW).count()
    assert context["totals"]["succeeded"] == Payment.objects.filter(
        created_at__gte=now - WINDOW, status=Payment.Status.SUCCESS).count()


@pytest.fixture
def day(shop):
    """Payments in every status across the last day: at its first edge (either side), hours ago,
    half an hour ago, in the last minutes (not foldable yet), and one a day and an hour old."""
    now = timezone.now()
    for minutes_ago in (24 * 60 + 61, 24 * 60 + 1, 24 * 60 - 1, 600, 61, 33, 12, 4, 1):
        for status, mode in (("SUCCESS", Payment.Mode.UPI), ("SUCCESS", Payment.Mode.CARD), ("FAILED", Payment.Mode.UPI),
                             ("EXPIRED", Payment.Mode.UPI), ("PENDING", Payment.Mode.UPI),
                             ("PROCESSING", Payment.Mode.NB)):
            fields = {"card_last4": "1111"} if mode == Payment.Mode.CARD else (
                {"bank_code": "SBIN"} if mode == Payment.Mode.NB else {})
            made_at(make_payment(shop, status=status, payment_mode=mode, **fields),
                    now - timedelta(minutes=minutes_ago))
    return now


def test_the_figures_equal_a_direct_count_unfolded_folded_and_after_transitions(day):
    now = day
    assert_dashboard_is_exact(now)  # nothing folded: all of it counted live

    assert buckets.dashboard_buckets_fold(now) == 288  # the buckets from 24 h 5 min to 5 min ago
    had_open = set(DashboardBucket.objects.exclude(open_ids=[]).values_list("start", flat=True))
    assert len(had_open) >= 4
    assert_dashboard_is_exact(now)

    # Every open payment of the folded buckets changes status, without a new fold.
    for payment in Payment.objects.filter(status__in=OPEN):
        if payment.status == Payment.Status.PROCESSING:
            payment_mark_succeeded(payment_id=payment.pk, bank_rrn=new_rrn())
        else:
            Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
            payment_expire(payment_id=payment.pk)
    assert_dashboard_is_exact(now)

    # The next fold folds again the buckets whose open payments are final now, and only those.
    assert buckets.dashboard_buckets_fold(now) == len(had_open)
    assert not DashboardBucket.objects.exclude(open_ids=[]).exists()
    assert_dashboard_is_exact(now)
    assert buckets.dashboard_buckets_fold(now) == 0  # nothing left to do


def test_a_payment_that_changes_status_in_a_later_bucket_counts_where_it_was_created(shop):
    now = timezone.now()
    created = now - timedelta(minutes=40)
    payment = made_at(make_payment(shop, status=Payment.Status.PROCESSING), created)
    buckets.dashboard_buckets_fold(now)
    folded = DashboardBucket.objects.get(start=buckets.bucket_floor(created))
    assert folded.open_ids == [payment.pk] and folded.finals == []

    payment_mark_failed(payment_id=payment.pk, reason="declined (test)")  # now: 40 minutes and 8 buckets later
    assert buckets.payment_outcomes(since=now - WINDOW) == [
        (buckets.bucket_floor(created), Payment.Mode.UPI, Payment.Status.FAILED, 1)]
    assert_dashboard_is_exact(now)

    buckets.dashboard_buckets_fold(now)
    folded.refresh_from_db()
    assert (folded.open_ids, folded.finals) == ([], [[Payment.Mode.UPI, Payment.Status.FAILED, 1]])
    assert_dashboard_is_exact(now)


def test_the_fold_leaves_the_last_minutes_to_the_live_count_and_forgets_old_buckets(shop):
    now = timezone.now()
    old = DashboardBucket.objects.create(start=buckets.bucket_floor(now - timedelta(days=3)), folded_at=now)
    recent = made_at(make_payment(shop), now - timedelta(minutes=3))
    buckets.dashboard_buckets_fold(now)
    assert not DashboardBucket.objects.filter(pk=old.pk).exists()
    newest = DashboardBucket.objects.latest("start").start
    # The newest folded bucket ended at least FOLD_MARGIN ago; the payment of 3 minutes ago is in none.
    assert newest + buckets.WIDTH <= now - buckets.FOLD_MARGIN < newest + 2 * buckets.WIDTH
    assert recent.pk not in {pk for ids in DashboardBucket.objects.values_list("open_ids", flat=True) for pk in ids}
    assert not any(DashboardBucket.objects.values_list("finals", flat=True))
    assert_dashboard_is_exact(now)


def test_the_buckets_line_up_with_ist_hours():
    """IST is UTC+05:30: a five-minute bucket never straddles an IST hour."""
    moment = timezone.now()
    for step in range(0, 24 * 60, 7):
        start = buckets.bucket_floor(moment + timedelta(minutes=step))
        assert local(start).minute % 5 == 0 and local(start + buckets.WIDTH - timedelta(microseconds=1)).hour == \
            local(start).hour
        assert buckets.bucket_ceil(start) == start and buckets.bucket_ceil(start + timedelta(seconds=1)) == \
            start + buckets.WIDTH


def test_the_page_says_how_fresh_its_figures_are(as_role, shop):
    make_payment(shop)
    html = as_role("support").get(URL).content.decode()
    section = html[html.index('data-testid="freshness"'):]
    assert "exact at that moment" in section[:600] and "every minute" in section[:600]


def test_the_open_payments_of_folded_buckets_are_asked_for_in_one_parameter_however_many(shop):
    """A busy day leaves thousands of open payments in the folded buckets (15,349 in the grown
    run); the dashboard and the fold read them by id. As one array parameter the statement is
    the same text for 4 ids or 3,001; with a placeholder per id it grew with the list and cost
    115 to 200 ms for 15,349 ids before PostgreSQL read a row."""
    now = timezone.now()
    open_one = made_at(make_payment(shop, status=Payment.Status.PROCESSING), now - timedelta(hours=2))
    final_one = made_at(make_payment(shop, status=Payment.Status.SUCCESS), now - timedelta(hours=3))
    sent = []

    def record(execute, sql, params, many, context):
        sent.append((sql, len(params or ())))
        return execute(sql, params, many, context)

    shapes = []
    for missing in (2, 2_999):
        ids = [open_one.pk, final_one.pk, *range(10**9, 10**9 + missing)]
        sent.clear()
        with connection.execute_wrapper(record):
            rows = selectors.payment_outcomes_by_bucket(ranges=[(now - timedelta(minutes=5), None)],
                                                         width=buckets.WIDTH, ids=ids)
            assert selectors.payment_ids_final(ids=ids) == [final_one.pk]
        assert sorted((status, n, open_ids) for _, _, status, n, open_ids in rows) == [
            (Payment.Status.PROCESSING, 1, [open_one.pk]), (Payment.Status.SUCCESS, 1, [])]
        shapes.append(sent[:])
    assert len(shapes[0]) == 2 and shapes[0] == shapes[1], [(len(sql), n) for sql, n in shapes[0] + shapes[1]]
