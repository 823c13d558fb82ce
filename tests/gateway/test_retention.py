"""Data retention (gateway.platform.retention): what only served a moment is deleted on schedule, in
short batches; records of money and of who did what are kept for years."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone

from gateway.celery import app
from gateway.platform.models import AuditRecord
from gateway.platform.retention import AUDIT_RETENTION, delete_in_batches
from gateway.platform.tasks import gateway_retention_task
from payments.models import AcquirerNotice, Payment, PaymentEvent, SandboxAcquirerCall
from payments.services import hosted
from payments.services.retention import ACQUIRER_NOTICES_RETENTION, SANDBOX_CALLS_RETENTION
from payments.tasks import acquirer_notices_purge_task, sandbox_calls_purge_task
from tests.support.factories import make_merchant
from webhooks.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent
from webhooks.retention import WEBHOOK_HISTORY_RETENTION
from webhooks.services import event_record
from webhooks.tasks import webhook_history_purge_task

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


@pytest.fixture
def shop():
    return make_merchant(code="KEEP", webhook_url="http://127.0.0.1:9/hooks")


def a_payment(tm, *, age: timedelta = timedelta(0)) -> Payment:
    payment = hosted.hosted_payment_create(merchant=tm.merchant, merchant_txn_id=f"ORD-{Payment.objects.count() + 1}",
                                           amount=50000, currency="INR",
                                           return_url="https://shop.example.in/return").payment
    Payment.objects.filter(pk=payment.pk).update(created_at=timezone.now() - age)
    return payment


def audit(age: timedelta) -> AuditRecord:
    record = AuditRecord.objects.create(actor_name="ops", action="merchant.update", object_type="merchant",
                                        object_id="1")
    AuditRecord.objects.filter(pk=record.pk).update(created_at=timezone.now() - age)
    return record


def event(tm, *, age: timedelta, status: str = WebhookDelivery.Status.DELIVERED) -> WebhookEvent:
    recorded = event_record(merchant=tm.merchant, event_type="payment.success",
                            payload={"event": "payment.success"}, subject_id="SP1")
    delivery = WebhookDelivery.objects.get(event=recorded)
    WebhookDeliveryAttempt.objects.create(delivery=delivery, number=1, url="http://127.0.0.1:9/hooks",
                                          outcome=WebhookDeliveryAttempt.Outcome.DELIVERED, http_status=200)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=status)
    WebhookEvent.objects.filter(pk=recorded.pk).update(created_at=timezone.now() - age)
    return recorded


def test_expired_sessions_go_and_live_ones_stay():
    live, expired = SessionStore(), SessionStore()
    live["checkout_grants"] = ["pay_1"]
    expired["checkout_grants"] = ["pay_2"]
    live.create()
    expired.create()
    Session.objects.filter(session_key=expired.session_key).update(expire_date=timezone.now() - DAY)
    gateway_retention_task()
    assert list(Session.objects.values_list("session_key", flat=True)) == [live.session_key]


def test_audit_records_are_kept_ten_years():
    kept, old = audit(AUDIT_RETENTION - DAY), audit(AUDIT_RETENTION + DAY)
    gateway_retention_task()
    assert list(AuditRecord.objects.values_list("pk", flat=True)) == [kept.pk]
    assert AUDIT_RETENTION >= timedelta(days=3650)


def test_the_sandbox_ledger_is_kept_a_month(shop):
    payment = a_payment(shop)
    kept = SandboxAcquirerCall.objects.create(payment=payment, step="bank_authorize", outcome="approved")
    old = SandboxAcquirerCall.objects.create(payment=payment, step="card_verify_otp", outcome="declined")
    SandboxAcquirerCall.objects.filter(pk=kept.pk).update(created_at=timezone.now() - SANDBOX_CALLS_RETENTION + DAY)
    SandboxAcquirerCall.objects.filter(pk=old.pk).update(created_at=timezone.now() - SANDBOX_CALLS_RETENTION - DAY)
    assert sandbox_calls_purge_task() == 1
    assert list(SandboxAcquirerCall.objects.values_list("pk", flat=True)) == [kept.pk]


def test_a_processors_webhooks_as_received_are_kept_six_months(shop):
    payment = a_payment(shop)
    notices = [AcquirerNotice.objects.create(acquirer="cashfree", body_sha256=f"{n:064x}", raw_body="{}",
                                             sent_at=timezone.now(), payment=payment) for n in range(2)]
    kept, old = notices
    AcquirerNotice.objects.filter(pk=kept.pk).update(created_at=timezone.now() - ACQUIRER_NOTICES_RETENTION + DAY)
    AcquirerNotice.objects.filter(pk=old.pk).update(created_at=timezone.now() - ACQUIRER_NOTICES_RETENTION - DAY)
    assert acquirer_notices_purge_task() == 1
    assert list(AcquirerNotice.objects.values_list("pk", flat=True)) == [kept.pk]
    assert Payment.objects.filter(pk=payment.pk).exists()


def test_webhook_history_goes_with_its_deliveries_and_attempts_after_six_months(shop):
    recent = event(shop, age=WEBHOOK_HISTORY_RETENTION - DAY)
    old = event(shop, age=WEBHOOK_HISTORY_RETENTION + DAY)
    dead = event(shop, age=WEBHOOK_HISTORY_RETENTION + DAY, status=WebhookDelivery.Status.DEAD)
    still_due = event(shop, age=WEBHOOK_HISTORY_RETENTION + DAY, status=WebhookDelivery.Status.FAILED)
    assert webhook_history_purge_task() == 2
    assert set(WebhookEvent.objects.values_list("pk", flat=True)) == {recent.pk, still_due.pk}
    assert not WebhookDelivery.objects.filter(event_id__in=[old.pk, dead.pk]).exists()
    assert WebhookDeliveryAttempt.objects.count() == 2


def test_payments_and_their_story_are_never_deleted(shop):
    payment = a_payment(shop, age=timedelta(days=365 * 12))
    PaymentEvent.objects.filter(payment=payment).update(created_at=timezone.now() - timedelta(days=365 * 12))
    gateway_retention_task(), sandbox_calls_purge_task(), webhook_history_purge_task()
    assert Payment.objects.filter(pk=payment.pk).exists() and PaymentEvent.objects.filter(payment=payment).exists()


def test_deletion_goes_in_short_batches_and_a_run_carries_on_where_the_last_stopped():
    records = [audit(AUDIT_RETENTION + DAY) for _ in range(5)]
    old = AuditRecord.objects.filter(created_at__lt=timezone.now() - AUDIT_RETENTION)
    assert delete_in_batches(old, batch_size=2, max_batches=2) == 4
    # The oldest (lowest key) first; the next run takes the rest.
    assert list(AuditRecord.objects.values_list("pk", flat=True)) == [records[-1].pk]
    assert delete_in_batches(old, batch_size=2, max_batches=2) == 1


def test_every_retention_task_is_scheduled():
    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"gateway.tasks.gateway_retention_task", "webhooks.tasks.webhook_history_purge_task",
            "payments.tasks.sandbox_calls_purge_task", "payments.tasks.idempotency_records_cleanup",
            "payments.tasks.acquirer_notices_purge_task"} <= scheduled
    assert scheduled <= set(app.tasks)
