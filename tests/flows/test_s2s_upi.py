"""S2S UPI end to end: create over the API, pay in the sandbox UPI app, and receive the signed
webhook on a real HTTP server, with a real Celery worker doing what the flow leaves to Celery
(the delayed approval, the expiry, the webhook delivery)."""
from __future__ import annotations

import time

import pytest

from gateway.core.signing import webhook_signature
from payments.models import Payment
from payments.payloads import UDF_KEYS
from tests.support.factories import make_merchant, signed_body
from tests.support.receiver import Receiver
from tests.support.worker import CeleryWorker
from webhooks.models import WebhookEvent

# The worker's own copy of the delay matters to the payments sweep; the countdown is set by the
# process that takes the payment (this one), through the `settings` fixture below.
WORKER_ENV = {"SANDBOX_UPI_SUCCESS_DELAY_SECONDS": "1", "SANDBOX_UPI_TIMEOUT_SECONDS": "2"}


@pytest.fixture(scope="module")
def worker(django_db_setup, tmp_path_factory):
    # beat: the payments sweep is what expires a payment (payments.services.expiry).
    with CeleryWorker(beat=True, env=WORKER_ENV, log_dir=tmp_path_factory.mktemp("s2s-worker")) as running:
        yield running


@pytest.fixture
def receiver():
    with Receiver() as r:
        yield r


@pytest.fixture
def shop(transactional_db, receiver, settings):
    settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS = 1
    settings.SANDBOX_UPI_TIMEOUT_SECONDS = 2
    return make_merchant(name="Flow Tea Stall", webhook_url=receiver.url("/hooks/gateway"))


def create(api, tm, **overrides) -> dict:
    body = signed_body(tm, udf1="cart-77", udf20="last", **overrides)
    response = api.post("/api/v2/payments/s2s", body, format="json", **tm.headers)
    assert response.status_code == 201, response.json()
    return response.json()


def pay(api, link, vpa) -> dict:
    response = api.post("/sandbox/upi/pay", {"upiUri": link, "payerVpa": vpa}, format="json")
    assert response.status_code == 202, response.json()
    return response.json()


def received_webhook(receiver, tm, worker):
    try:
        (request,) = receiver.wait_for(1, timeout=45)
    except AssertionError:
        raise AssertionError(f"no webhook arrived; worker log:\n{worker.log_text()[-4000:]}") from None
    header = request.headers["X-Service-Signature"]
    timestamp_ms = int(header.split(".", 1)[0])
    assert header == webhook_signature(tm.webhook_secret, request.body, timestamp_ms)
    assert abs(timestamp_ms - time.time() * 1000) < 300_000
    return request.json()


def assert_s2s_payload(payload: dict, created: dict, status: str):
    assert payload["status"] == status
    assert payload["event"] == {"SUCCESS": "payment.success", "FAILED": "payment.failed",
                                "EXPIRED": "payment.expired"}[status]
    for field in ("paymentId", "merchantTxnId", "amount", "currency", "paymentMode"):
        assert payload[field] == created[field], field
    assert payload["udf1"] == "cart-77" and payload["udf20"] == "last"
    assert set(UDF_KEYS) <= set(payload)


def test_success_vpa_pays_after_the_delay_and_the_merchant_gets_the_success_webhook(api, shop, receiver, worker):
    created = create(api, shop, paymentMode="UPI_QR")
    paid = pay(api, created["upiQrString"], "success@sandbox")
    assert paid["status"] == "PROCESSING"
    payload = received_webhook(receiver, shop, worker)
    assert_s2s_payload(payload, created, "SUCCESS")
    payment = Payment.objects.get(payment_id=created["paymentId"])
    assert payment.status == "SUCCESS" and payment.payer_vpa == "success@sandbox"
    assert payload["bankRrn"] == payment.bank_rrn and len(payment.bank_rrn) == 12
    assert WebhookEvent.objects.filter(subject_id=created["txnId"]).count() == 1


def test_failure_vpa_fails_at_once_and_the_merchant_gets_the_failed_webhook(api, shop, receiver, worker):
    created = create(api, shop, paymentMode="UPI_INTENT")
    paid = pay(api, created["intentUrl"], "failure@sandbox")
    assert paid["status"] == "FAILED"
    assert_s2s_payload(received_webhook(receiver, shop, worker), created, "FAILED")


def test_timeout_vpa_expires_at_the_sandbox_timeout_and_the_merchant_gets_the_expired_webhook(
        api, shop, receiver, worker):
    created = create(api, shop, paymentMode="UPI_QR", upiExpiryMinutes=5)
    paid = pay(api, created["upiQrString"], "timeout@sandbox")
    assert paid["status"] == "PROCESSING"
    assert_s2s_payload(received_webhook(receiver, shop, worker), created, "EXPIRED")
    assert Payment.objects.get(payment_id=created["paymentId"]).status == "EXPIRED"
