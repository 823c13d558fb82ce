"""The operations dashboard: payments and success rate by method over the last 24 hours as
server-rendered SVG charts, webhook health per merchant, payments stuck past their expiry and
refunds pending longer than the threshold."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.console.dashboard import dashboard_context
from payments.models import Payment
from refunds.models import Refund
from tests.support.factories import make_merchant, make_payment, make_refund
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

pytestmark = pytest.mark.django_db

URL = "/admin/console/dashboard/"


@pytest.fixture
def day_of_payments(shop):
    """In the last 24 hours, UPI: 3 succeeded, 1 failed; card: 1 succeeded, 1 failed; no method
    chosen: 1 expired, 1 still open. And one net banking payment older than 24 hours."""
    for status in ("SUCCESS", "SUCCESS", "SUCCESS", "FAILED"):
        make_payment(shop, status=status, payment_mode=Payment.Mode.UPI)
    make_payment(shop, status="SUCCESS", payment_mode=Payment.Mode.CARD, card_last4="1111")
    make_payment(shop, status="FAILED", payment_mode=Payment.Mode.CARD, card_last4="0002")
    make_payment(shop, status="EXPIRED")
    make_payment(shop, status="PENDING")
    old = make_payment(shop, status="SUCCESS", payment_mode=Payment.Mode.NB, bank_code="SBIN")
    Payment.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=25))


def test_payments_and_success_rate_by_method_over_the_last_24_hours(day_of_payments):
    context = dashboard_context()
    methods = {entry.method: entry for entry in context["methods"]}
    assert set(methods) == {"UPI", "Card", "not chosen yet"}  # the net banking payment is older
    assert (methods["UPI"].total, methods["UPI"].succeeded, methods["UPI"].failed) == (4, 3, 1)
    assert methods["UPI"].success_rate == 0.75
    assert methods["Card"].success_rate == 0.5
    # The session still open is left out of the rate; the expired one counts as not succeeded.
    assert (methods["not chosen yet"].open, methods["not chosen yet"].expired) == (1, 1)
    assert context["totals"]["payments"] == 8 and context["totals"]["success_rate_text"] == "57.1%"


def test_the_dashboard_renders_its_charts_as_svg_with_no_outside_address(as_role, day_of_payments):
    response = as_role("support").get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox") == 3
    assert 'aria-label="Payments by method and outcome, last 24 hours"' in html
    assert "75.0% of 4" in html and "50.0% of 2" in html  # the rate beside each bar, as text
    # Nothing is loaded from anywhere else: every src and href is on this site.
    for address in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert address.startswith(("/", "#", "?")) or address == "", address
    assert "<script src=\"http" not in html and "cdn" not in html.lower()


def test_webhook_health_per_merchant(as_role, receiver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [10]
    healthy = make_merchant(code="HEALTHY", webhook_url=receiver.url("/ok"))
    failing = make_merchant(code="FAILING", webhook_url=receiver.url("/broken"))
    make_merchant(code="NOHOOK")
    slow = make_merchant(code="SLOW", webhook_url=receiver.url("/slow"))
    waiting = make_payment(slow)
    WebhookDelivery.objects.filter(event__subject_id=waiting.sabpaisa_txn_id).update(
        created_at=timezone.now() - timedelta(minutes=6))
    delivered = make_payment(healthy)
    receiver.respond_with(200)
    delivery_attempt_run(WebhookDelivery.objects.get(event__subject_id=delivered.sabpaisa_txn_id).pk)
    # FAILING: one delivery dead (both attempts refused), one waiting for its retry, one not tried.
    dead, retrying = make_payment(failing), make_payment(failing)
    make_payment(failing)
    receiver.respond_with(500, 500, 500)
    first = WebhookDelivery.objects.get(event__subject_id=dead.sabpaisa_txn_id)
    delivery_attempt_run(first.pk)
    WebhookDelivery.objects.filter(pk=first.pk).update(next_attempt_at=timezone.now())
    delivery_attempt_run(first.pk)
    delivery_attempt_run(WebhookDelivery.objects.get(event__subject_id=retrying.sabpaisa_txn_id).pk)

    rows = {row.merchant.code: row for row in dashboard_context()["webhooks"]}
    assert set(rows) == {"HEALTHY", "FAILING", "SLOW"}  # NOHOOK has no address and nothing in flight
    assert (rows["SLOW"].state, rows["SLOW"].pending) == ("backlog", 1)  # due for 6 minutes: workers behind
    assert (rows["FAILING"].state, rows["FAILING"].dead, rows["FAILING"].retrying, rows["FAILING"].pending) == (
        "failing", 1, 1, 1)
    assert rows["FAILING"].last_success is None and rows["FAILING"].oldest_due is not None
    assert (rows["HEALTHY"].state, rows["HEALTHY"].dead, rows["HEALTHY"].pending) == ("healthy", 0, 0)
    assert rows["HEALTHY"].last_success is not None

    html = as_role("support").get(URL).content.decode()
    section = html[html.index('data-testid="webhook-health"'):]
    assert section.index("FAILING") < section.index("SLOW") < section.index("HEALTHY")  # worst first
    assert "never" in section and "status__exact=dead" in section


def test_payments_stuck_past_their_expiry_are_listed(as_role, shop):
    stuck = make_payment(shop, status=Payment.Status.PROCESSING)
    just_expired = make_payment(shop, status=Payment.Status.PROCESSING)
    Payment.objects.filter(pk=stuck.pk).update(expires_at=timezone.now() - timedelta(minutes=30))
    Payment.objects.filter(pk=just_expired.pk).update(expires_at=timezone.now() - timedelta(seconds=30))
    make_payment(shop, status=Payment.Status.PENDING)  # not expired yet
    context = dashboard_context()
    assert [payment.pk for payment in context["stuck"]] == [stuck.pk] and context["stuck_count"] == 1
    html = as_role("support").get(URL).content.decode()
    assert "Payments stuck past their expiry: 1" in html and stuck.sabpaisa_txn_id in html


def test_refunds_pending_longer_than_15_minutes_are_listed(as_role, shop):
    late = make_refund(make_payment(shop), amount=500)
    fresh = make_refund(make_payment(shop), amount=500)
    Refund.objects.filter(pk=late.pk).update(created_at=timezone.now() - timedelta(minutes=16))
    Refund.objects.filter(pk=fresh.pk).update(created_at=timezone.now() - timedelta(minutes=14))
    context = dashboard_context()
    assert [refund.pk for refund in context["late_refunds"]] == [late.pk]
    assert context["refund_alert_minutes"] == 15
    html = as_role("support").get(URL).content.decode()
    assert "Refunds pending over 15 minutes: 1" in html and late.refund_id in html and fresh.refund_id not in html


def test_the_dashboard_is_linked_from_the_console_front_page(as_role, shop):
    html = as_role("support").get("/admin/").content.decode()
    assert f'href="{URL}"' in html


def test_an_empty_dashboard_renders(as_role, db):
    html = as_role("support").get(URL).content.decode()
    assert "No payments in this period." in html and "None." in html


def test_test_events_never_count_toward_a_merchants_webhook_health(as_role, receiver, settings):
    # Issue 20: one failed test event (attempted once, never retried, so dead at once) marked
    # the merchant "failing" for seven days.
    from webhooks.services import webhook_test_send

    tried = make_merchant(code="TRIED", webhook_url=receiver.url("/not-yet"))
    receiver.respond_with(500)
    # Queued by webhook_test_send (issue 18); delivery_attempt_run is what the queued task does.
    tried_delivery = delivery_attempt_run(webhook_test_send(merchant=tried.merchant, actor=None).pk)
    assert tried_delivery.status == WebhookDelivery.Status.DEAD
    delivered_test = make_merchant(code="TESTONLY", webhook_url=receiver.url("/ok"))
    receiver.respond_with(200)
    test_delivery = delivery_attempt_run(webhook_test_send(merchant=delivered_test.merchant, actor=None).pk)
    assert test_delivery.status == WebhookDelivery.Status.DELIVERED

    rows = {row.merchant.code: row for row in dashboard_context()["webhooks"]}
    assert (rows["TRIED"].state, rows["TRIED"].dead, rows["TRIED"].pending) == ("healthy", 0, 0)
    # A delivered test is no proof that real webhooks arrive either.
    assert rows["TESTONLY"].last_success is None


def test_the_dashboard_states_the_expiry_sweep_interval_beat_really_uses(as_role, db, settings):
    # It said "every 10 s" while beat ran the sweep every second (docs/console.md said so too).
    assert settings.CELERY_BEAT_SCHEDULE["payments-expire"]["schedule"] == 1.0
    html = as_role("support").get(URL).content.decode()
    assert "(Celery beat, every second)" in html and "every 10 s" not in html
