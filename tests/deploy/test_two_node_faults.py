"""The fault run's subset on the two-node harness (the whole run, benchmarks/faults, takes about
7 minutes on one node; this takes about one): a merchant's orders flow through the balancer,
paid, declined and refunded, retried with the same keys as a careful merchant retries, while

- a worker is SIGKILLed mid-traffic and started again,
- both web nodes are restarted one after the other, each taken out of the balancer's pool
  first and back in it before the next goes (a rolling upgrade: docs/operations.md; stopped
  while still in the pool, a node once left a request in its listen backlog unanswered, which
  HAProxy answered 502),
- Redis, the broker, is killed and started empty (every queued message lost),
- beat is SIGKILLed and started again (its successor waits out the dead one's beat lock).

A Celery worker sometimes exits by itself when the broker dies under it (kombu 5.7 fails
restoring its unacknowledged message: "Unrecoverable error: 'NoneType' object has no attribute
'hostname'"); the units' Restart=always starts it again, and so does the harness.

Then, once everything settles: no order was created twice, no request was answered with a 5xx
or not at all, every final payment and refund has exactly one event, and every event reached
the merchant's receiver (at least once; duplicates carry the same event id)."""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter

import pytest

from payments.models import Payment
from refunds.models import Refund
from tests.support.factories import make_merchant, now
from tests.support.receiver import Receiver
from tests.support.waiting import wait_until
from webhooks.models import WebhookEvent

ORDERS = 30
SPACING_SECONDS = 1.2  # about 36 s of traffic, over which the faults below are spread


class Merchant:
    """The merchant's server: every call retried on no answer, 429 or 5xx, with the same keys."""

    def __init__(self, base_url: str, shop):
        self.base_url, self.shop = base_url, shop
        self.calls: list[tuple[str, int | str]] = []
        self.lock = threading.Lock()

    def _once(self, path: str, body: dict, headers: dict) -> tuple[int | str, dict]:
        request = urllib.request.Request(self.base_url + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw)
            except ValueError:
                return error.code, {"raw": raw[:200].decode(errors="replace")}
        except (OSError, urllib.error.URLError) as error:
            return type(getattr(error, "reason", error)).__name__, {}

    def call(self, label: str, path: str, make_body, headers: dict | None = None) -> tuple[int | str, dict]:
        for _ in range(20):
            status, data = self._once(path, make_body(), {**self.shop.http_headers, **(headers or {})})
            with self.lock:
                self.calls.append((label, status))
            if isinstance(status, int) and status < 500 and status != 429:
                return status, data
            time.sleep(0.5)
        return status, data

    def order(self, i: int, outcomes: dict) -> None:
        txn = f"FAULT-{i}-{time.time_ns() % 10**9}"

        def creation():
            body = {"merchantId": self.shop.code, "merchantTxnId": txn, "amount": 20_000, "currency": "INR",
                    "customerName": "Asha Rao", "customerEmail": "asha@example.com", "customerPhone": "9876543210",
                    "paymentMode": "UPI_QR", "timestamp": now()}
            body["checksum"] = self.shop.checksum(self.shop.code, txn, 20_000, "INR", body["timestamp"])
            return body

        status, created = self.call("create", "/api/v2/payments/s2s", creation, {"X-Idempotency-Key": txn})
        outcomes[txn] = {"create": status}
        if status != 201:
            return
        vpa = "failure@sandbox" if i % 3 == 2 else "success@sandbox"
        status, _ = self.call("pay", "/sandbox/upi/pay", lambda: {"upiUri": created["upiQrString"], "payerVpa": vpa})
        outcomes[txn]["pay"] = status
        if vpa == "failure@sandbox" or i % 3 != 0:
            return
        payment = wait_until(lambda: Payment.objects.filter(merchant_txn_id=txn, status="SUCCESS").first(), 120,
                             f"{txn} never succeeded")

        def refund():
            body = {"merchantId": self.shop.code, "transactionId": payment.sabpaisa_txn_id,
                    "refundId": f"R-{txn}", "amount": 5_000, "timestamp": now()}
            body["checksum"] = self.shop.checksum(self.shop.code, payment.sabpaisa_txn_id, f"R-{txn}",
                                                  body["timestamp"])
            return body

        outcomes[txn]["refund"] = self.call("refund", "/api/v2/refunds", refund)[0]


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


def test_orders_flow_through_worker_kills_rolling_restarts_and_a_broker_restart(
        cluster, cluster_redis, receiver, transactional_db):
    shop = make_merchant(name="Fault Tea", webhook_url=receiver.url("/hooks"), rate_limit=100_000)
    merchant, outcomes, threads = Merchant(cluster.url, shop), {}, []

    def traffic():
        for i in range(ORDERS):
            thread = threading.Thread(target=merchant.order, args=(i, outcomes), daemon=True)
            thread.start()
            threads.append(thread)
            time.sleep(SPACING_SECONDS)

    driver = threading.Thread(target=traffic, daemon=True)
    driver.start()
    faults = []

    def rolling_restart(index):
        cluster.rolling_restart(index)  # out of the pool, drained, restarted, back: docs/operations.md
        faults.append(f"web{index + 1} restarted")

    time.sleep(4)
    cluster.workers[0].kill()
    cluster.workers[0].start()
    faults.append("worker1 SIGKILL")
    rolling_restart(0)
    rolling_restart(1)
    connected = cluster.broker_connections()
    cluster_redis.kill()
    time.sleep(1)
    cluster_redis.start()
    faults.append("redis killed, started empty")
    cluster.beat.kill()
    cluster.beat.start()
    faults.append("beat SIGKILL")
    driver.join(120)
    for thread in threads:
        thread.join(180)
    cluster.wait_broker_reconnected(connected)

    def settled():
        open_payments = Payment.objects.filter(merchant=shop.merchant, status__in=["PENDING", "PROCESSING"]).count()
        open_refunds = Refund.objects.filter(merchant=shop.merchant).exclude(status__in=["SUCCESS", "FAILED"]).count()
        events = set(WebhookEvent.objects.filter(merchant=shop.merchant).values_list("id", flat=True))
        delivered = {r.headers["X-Service-Event-Id"] for r in receiver.requests}
        return open_payments == 0 and open_refunds == 0 and events and events <= delivered

    wait_until(settled, 180, lambda: f"not settled after the faults {faults}:\n{cluster.logs()}")

    statuses = Counter(status for _, status in merchant.calls)
    assert len(outcomes) == ORDERS and all(o["create"] == 201 for o in outcomes.values()), outcomes
    bad = {status: n for status, n in statuses.items() if not isinstance(status, int) or status >= 500}
    assert not bad, f"answers that were not answers: {bad}; all: {statuses}"
    per_txn = Counter(Payment.objects.filter(merchant=shop.merchant).values_list("merchant_txn_id", flat=True))
    assert set(per_txn.values()) == {1} and len(per_txn) == ORDERS
    for payment in Payment.objects.filter(merchant=shop.merchant):
        assert WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id, event_type__startswith="payment.").count() == 1
    refunds = Refund.objects.filter(merchant=shop.merchant)
    assert refunds.count() == sum(1 for o in outcomes.values() if "refund" in o)
    for refund in refunds:
        assert WebhookEvent.objects.filter(subject_id=refund.refund_id, event_type__startswith="refund.").count() == 1
    # Duplicates are allowed (at least once), each with its event's id and the same body.
    bodies: dict[str, set] = {}
    for request in receiver.requests:
        bodies.setdefault(request.headers["X-Service-Event-Id"], set()).add(request.body)
    assert all(len(b) == 1 for b in bodies.values())
    restarted = {p.name: p.restarts for p in (*cluster.workers, cluster.beat, *cluster.nodes) if p.restarts}
    print(f"\nfaults: {faults}; calls: {dict(statuses)}; events: {len(bodies)}; "
          f"deliveries: {len(receiver.requests)}; restarted by Restart=always: {restarted or 'none'}")
