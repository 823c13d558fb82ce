"""Redis trouble must not take payments down (issue 18, item 6).

The service runs as production runs it (gunicorn, a Celery worker with beat) on the test
database and on a redis-server of this test's own, which is hung (SIGSTOP) and then killed while
customers and a merchant keep paying and refunding through real HTTP. Every answer must still
come (within a client timeout far above REDIS_TIMEOUT_SECONDS: without the timeouts a request
waits on a hung Redis until it answers again), none may be a 5xx, and once Redis is back every
payment, refund and webhook must complete: what could not be queued is found by the sweeps.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from payments.models import Payment
from refunds.models import Refund
from tests.support.factories import make_merchant, signed_body
from tests.support.receiver import Receiver
from tests.support.spare_redis import SpareRedis, free_port
from tests.support.waiting import wait_until
from tests.support.worker import CeleryWorker, database_url_for_tests
from webhooks.models import WebhookDelivery, WebhookEvent

pytestmark = pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")

ROOT = Path(__file__).resolve().parents[2]
# Far above what a request may now wait for Redis (REDIS_TIMEOUT_SECONDS, 0.25 s), far below how
# long a hung Redis is kept hung here: a request that waits on it runs into this.
CLIENT_TIMEOUT = 4.0
HANG_SECONDS = 6.0
DOWN_SECONDS = 4.0
SETTLE_SECONDS = 120.0
# The worker's sweeps run often, so the run settles quickly once Redis is back.
FAST_SWEEPS = {
    "webhook-deliveries-due": {"task": "webhooks.tasks.deliveries_due_sweep", "schedule": 1.0},
    "payments-expire": {"task": "payments.tasks.payments_expire_sweep", "schedule": 1.0},
    "refunds-pending": {"task": "refunds.tasks.refunds_pending_sweep", "schedule": 2.0},
}


@dataclass
class Traffic:
    """What the customers and the merchant saw."""

    answers: list = field(default_factory=list)      # (phase, what, status, seconds)
    failures: list = field(default_factory=list)     # (phase, what, error)
    payments: list = field(default_factory=list)     # sabpaisaTxnIds created
    refunds: list = field(default_factory=list)      # refundIds accepted
    phase: str = "normal"
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, what: str, url: str, body: dict, headers: dict | None = None) -> dict | None:
        request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", **(headers or {})})
        phase, started = self.phase, time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=CLIENT_TIMEOUT) as response:
                status, payload = response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            status, payload = exc.code, json.loads(exc.read() or b"{}")
        except Exception as exc:  # noqa: BLE001 - a timeout or a dropped connection: no answer
            with self.lock:
                self.failures.append((phase, what, repr(exc)))
            return None
        with self.lock:
            self.answers.append((phase, what, status, time.monotonic() - started))
            if status >= 300:
                self.failures.append((phase, what, f"{status} {payload}"))
        return payload if status < 300 else None


class Web:
    """gunicorn serving the project, as production starts it, on a spare port."""

    def __init__(self, redis_url: str, log_dir: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "DATABASE_URL": database_url_for_tests(), "REDIS_URL": redis_url,
               "GATEWAY_ENV": "staging", "SANDBOX_UPI_SUCCESS_DELAY_SECONDS": "1",
               "DEFAULT_RATE_LIMIT_PER_SECOND": "100000"}
        self._log = open(log_dir / "gunicorn.log", "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "gateway.wsgi:application", "--bind", f"127.0.0.1:{self.port}",
             "--workers", "2", "--timeout", "60"], cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=2).close()
                return
            except Exception:  # noqa: BLE001 - not up yet
                assert self.process.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)

    def stop(self):
        self.process.terminate()
        self.process.wait(15)
        self._log.close()


def test_payments_and_refunds_go_on_while_redis_hangs_and_dies_and_nothing_is_lost(transactional_db, tmp_path):
    redis = SpareRedis().start()
    receiver = Receiver().__enter__()
    tm = make_merchant(webhook_url=receiver.url("/hooks"), rate_limit=100000)
    worker = CeleryWorker(beat=True, redis_url=redis.url, log_dir=tmp_path, settings={
        "CELERY_BEAT_SCHEDULE": FAST_SWEEPS}, env={"REFUND_PENDING_SWEEP_AFTER_SECONDS": "1",
                                                   "WEBHOOK_RETRY_SCHEDULE": "1,1,1,1,1,1,1,1,1,1"})
    web = None
    traffic = Traffic()
    try:
        worker.start()
        web = Web(redis.url, tmp_path)

        def order():
            """A customer pays by UPI (the sandbox approves a second later)."""
            created = traffic.call("create", web.url + "/api/v2/payments/s2s", signed_body(tm), tm.http_headers)
            if created is None:
                return
            with traffic.lock:
                traffic.payments.append(created["txnId"])
            traffic.call("pay", web.url + "/sandbox/upi/pay",
                         {"upiUri": created["upiQrString"], "payerVpa": "success@sandbox"})

        def refund(txn_id: str):
            accepted = traffic.call("refund", web.url + "/api/v2/refunds",
                                    {"merchantId": tm.code, "sabpaisaTxnId": txn_id, "refundAmount": 100},
                                    tm.http_headers)
            if accepted is not None:
                with traffic.lock:
                    traffic.refunds.append(accepted.get("refundId"))

        # Paid before the trouble starts: these are refunded during it.
        for _ in range(8):
            order()
        warm_up = Payment.objects.filter(sabpaisa_txn_id__in=list(traffic.payments))
        wait_until(lambda: warm_up.filter(status=Payment.Status.SUCCESS).count() == 8, 60,
                   lambda: f"the warm-up payments never succeeded:\n{worker.log_text()[-3000:]}")
        to_refund = list(warm_up.values_list("sabpaisa_txn_id", flat=True))

        running = threading.Event()
        running.set()

        def customers():
            while running.is_set():
                order()

        def merchant():
            while running.is_set():
                with traffic.lock:
                    txn_id = to_refund.pop() if to_refund else None
                if txn_id is not None:
                    refund(txn_id)
                time.sleep(0.3)

        threads = [threading.Thread(target=customers) for _ in range(2)] + [threading.Thread(target=merchant)]
        for thread in threads:
            thread.start()
        time.sleep(1.5)
        traffic.phase = "hung"
        redis.pause()
        time.sleep(HANG_SECONDS)
        redis.resume()
        traffic.phase = "normal"
        time.sleep(1.5)
        traffic.phase = "killed"
        redis.kill()
        time.sleep(DOWN_SECONDS)
        redis.start()  # empty: every message it held is gone
        traffic.phase = "normal"
        time.sleep(1.5)
        running.clear()
        for thread in threads:
            thread.join(30)

        # Every request was answered, none with an error, during the trouble as before it.
        assert traffic.failures == []
        phases = {phase for phase, *_ in traffic.answers}
        assert {"hung", "killed"} <= phases, phases
        hung = [seconds for phase, _, _, seconds in traffic.answers if phase == "hung"]
        print(f"answers: {len(traffic.answers)}; during the hang {len(hung)}, longest {max(hung):.3f} s")

        # A Celery worker whose broker was killed under load sometimes stops consuming (kombu 5.7
        # fails in its hub's close: seen here 2 runs in 7 on a loaded machine); production runs
        # workers under a supervisor that restarts them. What must not depend on the worker
        # process surviving is the data: restart it as a supervisor would, and check that
        # nothing is lost once Redis is back: every payment succeeds, every refund is
        # processed, every event reaches the merchant.
        worker.stop()
        worker.start()
        created = Payment.objects.filter(sabpaisa_txn_id__in=traffic.payments)
        open_ones = created.exclude(status=Payment.Status.SUCCESS)
        wait_until(lambda: not open_ones.exists(), SETTLE_SECONDS,
                   lambda: f"payments left: {list(open_ones.values_list('status', flat=True))}\n{worker.log_text()[-3000:]}")
        refunds = Refund.objects.filter(refund_id__in=traffic.refunds)
        assert len(traffic.refunds) == 8 and refunds.count() == 8
        wait_until(lambda: not refunds.exclude(status__in=Refund.FINAL_STATUSES).exists(), SETTLE_SECONDS,
                   lambda: f"refunds left pending\n{worker.log_text()[-3000:]}")
        assert not refunds.filter(status="FAILED").exists()
        events = set(WebhookEvent.objects.filter(merchant=tm.merchant).values_list("id", flat=True))
        wait_until(lambda: not WebhookDelivery.objects.filter(merchant=tm.merchant).exclude(
            status=WebhookDelivery.Status.DELIVERED).exists(), SETTLE_SECONDS, lambda: "deliveries left undelivered")
        received = {request.headers["X-Service-Event-Id"] for request in receiver.requests}
        assert received == events and len(events) == len(traffic.payments) + 8
    finally:
        if web is not None:
            web.stop()
        worker.stop()
        redis.stop()
        receiver.__exit__(None, None, None)
