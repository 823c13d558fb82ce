"""End to end with real processes: a refund requested over HTTP is submitted to the sandbox bank
by a real Celery worker, and its refund.processed / refund.failed webhook reaches a real HTTP
receiver, signed."""
import base64
import hashlib
import hmac

import pytest

from refunds.models import Refund
from tests.refunds.conftest import http
from tests.support.factories import make_merchant, make_success_payment, refund_body
from tests.support.receiver import Receiver
from tests.support.waiting import wait_until
from tests.support.worker import CeleryWorker


@pytest.fixture
def worker(transactional_db, tmp_path):
    # A fixture, so that the two-node harness (tests/deploy/) runs this test with its own workers.
    with CeleryWorker(log_dir=tmp_path) as running:
        yield running


@pytest.fixture
def receiver():
    with Receiver() as r:
        yield r


def _verify_signature(request, webhook_secret: str) -> None:
    timestamp, signature = request.headers["X-Service-Signature"].split(".", 1)
    digest = hmac.new(webhook_secret.encode(), timestamp.encode() + b"." + request.body, hashlib.sha256).digest()
    assert hmac.compare_digest(base64.b64encode(digest).decode(), signature)


def _refund_events(receiver, count: int) -> dict:
    def arrived():
        found = {r.headers["X-Service-Event-Type"]: r for r in receiver.requests
                 if r.headers["X-Service-Event-Type"].startswith("refund.")}
        return found if len(found) >= count else None

    return wait_until(arrived, timeout=60, message="refund webhooks did not arrive")


def test_refunds_are_processed_by_the_worker_and_their_webhooks_delivered(
        live_server, transactional_db, receiver, worker):
    merchant = make_merchant(webhook_url=receiver.url("/hooks/gateway"))
    payment = make_success_payment(merchant, amount=200_013)
    headers = {"X-Api-Key": merchant.api_key, "Content-Type": "application/json"}
    url = live_server.url + "/api/v2/refunds"

    status, failing = http("POST", url, headers=headers,
                           body=refund_body(merchant, payment, refundAmount=100_013, refundId="WF-FAIL"))
    assert status == 200, failing
    status, passing = http("POST", url, headers=headers,
                           body=refund_body(merchant, payment, refundAmount=50_000, refundId="WF-OK"))
    assert status == 200, passing
    events = _refund_events(receiver, 2)

    processed, failed = events["refund.processed"], events["refund.failed"]
    for request in (processed, failed):
        _verify_signature(request, merchant.webhook_secret)
        assert request.headers["X-Service-Event-Id"].startswith("evt_")

    body = processed.json()
    assert body["event"] == "refund.processed" and body["refundId"] == "WF-OK"
    assert body["status"] == "SUCCESS" and body["refundAmount"] == 50_000
    assert body["bankRefundReference"].startswith("RF")
    assert body["sabpaisaTxnId"] == payment.sabpaisa_txn_id
    assert body["paidAmountPaise"] == 200_013

    body = failed.json()
    assert body["event"] == "refund.failed" and body["refundId"] == "WF-FAIL"
    assert body["status"] == "FAILED" and body["refundAmount"] == 100_013
    assert body["failureReason"] and body["bankRefundReference"] is None

    statuses = dict(Refund.objects.values_list("refund_id", "status"))
    assert statuses == {"WF-OK": "SUCCESS", "WF-FAIL": "FAILED"}

    # The failed amount was released: it can be refunded again.
    status, again = http("POST", url, headers=headers,
                         body=refund_body(merchant, payment, refundAmount=150_013))
    assert status == 200, again
