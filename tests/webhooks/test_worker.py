"""Delivery through real Celery worker processes: the paths a unit test cannot reach."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import transaction

from tests.support.factories import make_merchant
from tests.support.receiver import Reply
from tests.support.spare_redis import SpareRedis
from tests.support.waiting import wait_until
from tests.support.worker import RESTART_SECONDS, CeleryWorker, database_url_for_tests
from webhooks.models import WebhookDelivery
from webhooks.services import event_record

ROOT = Path(__file__).resolve().parents[2]
FAST = {"WEBHOOK_RETRY_SCHEDULE": "1,1,1"}


def delivered(event_id):
    return WebhookDelivery.objects.filter(event_id=event_id, status=WebhookDelivery.Status.DELIVERED).first()


@pytest.fixture
def merchant_for(transactional_db):
    return lambda receiver: make_merchant(webhook_url=receiver.url("/hooks/gateway"))


def test_an_event_recorded_in_a_transaction_is_delivered_by_the_worker(merchant_for, receiver, tmp_path):
    tm = merchant_for(receiver)
    with CeleryWorker(env=FAST, log_dir=tmp_path):
        with transaction.atomic():
            event = event_record(merchant=tm.merchant, event_type="payment.success",
                                 payload={"event": "payment.success", "txn_id": "T1"}, subject_id="T1")
        (request,) = receiver.wait_for(1, timeout=30)
        delivery = wait_until(lambda: delivered(event.id))
    assert request.headers["X-Service-Event-Id"] == event.id
    assert request.body == event.body.encode()
    assert delivery.attempts == 1


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
def test_nothing_is_lost_when_the_broker_is_down_while_an_event_is_recorded(merchant_for, receiver, tmp_path):
    tm = merchant_for(receiver)
    broker = SpareRedis()
    broker.start()
    # restart: kombu's Redis transport can end the worker when the broker vanishes while it holds
    # an unacknowledged message ("Unrecoverable error: AttributeError(... 'hostname')" from
    # restore_unacked, kombu #582 and #970); the shipped unit starts it again, and so does the test.
    worker = CeleryWorker(beat=True, env=FAST, redis_url=broker.url, log_dir=tmp_path, restart=True)
    try:
        worker.start()
        broker.stop()
        # Another process (a web worker, say) records a payment's final status and its event
        # while the broker is down: it commits, and its attempt to queue the delivery fails.
        script = (
            "from django.db import transaction\n"
            "from gateway.platform.models import Merchant\n"
            "from webhooks.services import event_record\n"
            "with transaction.atomic():\n"
            f"    e = event_record(merchant=Merchant.objects.get(code={tm.code!r}), event_type='payment.success',"
            " payload={'event': 'payment.success'}, subject_id='T2')\n"
            "print(e.id)\n"
        )
        env = {**os.environ, "DATABASE_URL": database_url_for_tests(), "REDIS_URL": broker.url}
        done = subprocess.run([sys.executable, "manage.py", "shell", "-c", script], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        event_id = done.stdout.strip().splitlines()[-1]
        assert "not queued" in done.stderr  # the broker really was unreachable
        assert WebhookDelivery.objects.get(event_id=event_id).status == WebhookDelivery.Status.PENDING

        broker.start()  # empty: whatever was queued before is gone too
        (request,) = receiver.wait_for(1, timeout=45)
        assert request.headers["X-Service-Event-Id"] == event_id
        assert wait_until(lambda: delivered(event_id)).attempts == 1
    finally:
        worker.stop()
        broker.stop()


def test_nothing_is_lost_when_the_worker_is_killed_in_the_middle_of_a_delivery(merchant_for, receiver, tmp_path):
    # The first request is never answered: the worker is killed while it waits.
    receiver.respond_with(Reply(hang=True), default=200)
    tm = merchant_for(receiver)
    # A short per-attempt timeout makes the dead worker's claim run out sooner.
    worker = CeleryWorker(beat=True, env=FAST, settings={"WEBHOOK_TIMEOUT_SECONDS": 2}, log_dir=tmp_path)
    try:
        worker.start()
        with transaction.atomic():
            event = event_record(merchant=tm.merchant, event_type="payment.expired",
                                 payload={"event": "payment.expired"}, subject_id="T3")
        receiver.wait_for(1, timeout=30)
        worker.kill()
        receiver.release()

        worker.start()  # a fresh worker; the dead one's claim runs out and the sweep resends
        first, second = receiver.wait_for(2, timeout=30)
        delivery = wait_until(lambda: delivered(event.id))
    finally:
        worker.stop()
    assert first.headers["X-Service-Event-Id"] == second.headers["X-Service-Event-Id"] == event.id
    assert first.body == second.body
    assert [(a.number, a.outcome) for a in delivery.attempt_rows.all()] == [(1, "interrupted"), (2, "delivered")]
    assert receiver.count == 2


def test_a_test_event_sent_from_the_console_is_delivered_by_the_worker(merchant_for, receiver, tmp_path, client,
                                                                        django_user_model):
    tm = merchant_for(receiver)
    staff = django_user_model.objects.create_superuser("ops", password="pw-ops-12345")
    client.force_login(staff)
    with CeleryWorker(env=FAST, log_dir=tmp_path):
        response = client.post("/admin/webhooks/webhookdelivery/send-test/", {"merchant": tm.merchant.pk})
        assert response.status_code == 302
        delivery = WebhookDelivery.objects.get(event__event_type="webhook.test")
        (request,) = receiver.wait_for(1, timeout=30)
        delivery = wait_until(lambda: delivered(delivery.event_id))
    assert request.headers["X-Service-Event-Type"] == "webhook.test"
    assert delivery.attempts == 1


def test_the_test_worker_comes_back_after_it_dies_as_the_shipped_unit_does(merchant_for, receiver, tmp_path):
    unit = (ROOT / "deploy/systemd/gateway-worker.service").read_text().splitlines()
    assert "Restart=always" in unit and "RestartSec=2" in unit
    tm = merchant_for(receiver)
    worker = CeleryWorker(env=FAST, log_dir=tmp_path, restart=True)
    try:
        worker.start()
        first = worker.pid
        os.killpg(first, 9)  # the worker and its pool, gone without a word from us
        assert wait_until(lambda: worker.restarts == 1 and worker.running and " ready." in worker.log_text(),
                          timeout=45)
        assert worker.pid != first
        with transaction.atomic():
            event = event_record(merchant=tm.merchant, event_type="payment.success",
                                 payload={"event": "payment.success"}, subject_id="T4")
        receiver.wait_for(1, timeout=30)
        assert wait_until(lambda: delivered(event.id)).attempts == 1
    finally:
        worker.stop()
    time.sleep(RESTART_SECONDS + 1)  # longer than RestartSec: a worker let go stays down
    assert not worker.running and worker.restarts == 1
