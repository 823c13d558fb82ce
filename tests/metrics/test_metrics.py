"""/metrics: who may read it, and each family counting what it says it counts.

The tests read this process's registry (no PROMETHEUS_MULTIPROC_DIR here); the sum across
gunicorn's workers and the worker's own page are shown by a real Prometheus in
tests/metrics/test_prometheus.py."""
from __future__ import annotations

import socket
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import transaction
from django.test import Client, override_settings
from django.utils import timezone
from prometheus_client import REGISTRY

from gateway.core import metrics, redisguard
from payments.acquirer.cashfree.client import CashfreeClient
from payments.acquirer.cashfree.errors import CashfreeError
from payments.models import Payment
from payments.tasks import payments_expire_sweep
from refunds.services import refund_create
from refunds.transitions import refund_mark_processed
from tests.support.factories import make_merchant, make_payment, session_body
from tests.support.receiver import Receiver
from webhooks.models import WebhookDelivery
from webhooks.selectors import deliveries_due_count
from webhooks.services import event_record
from webhooks.tasks import deliveries_due_sweep

TOKEN = "t" * 40


def value(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


# --- who may read it ------------------------------------------------------------------------------

def test_metrics_answer_a_loopback_scraper_in_the_prometheus_text_format():
    response = Client(REMOTE_ADDR="127.0.0.1").get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    body = response.content.decode()
    for family in ("gateway_http_request_duration_seconds", "gateway_payments_created_total",
                   "gateway_payments_final_total", "gateway_acquirer_calls_total", "gateway_webhook_deliveries_total",
                   "gateway_webhook_deliveries_due", "gateway_refunds_total", "gateway_sweep_duration_seconds",
                   "gateway_redis_errors_total", "gateway_database_errors_total",
                   "gateway_processor_ratelimit_headroom_ratio"):
        assert f"# TYPE {family}" in body, family
    openmetrics = Client(REMOTE_ADDR="127.0.0.1").get("/metrics", HTTP_ACCEPT="application/openmetrics-text; version=1.0.0")
    assert openmetrics["Content-Type"].startswith("application/openmetrics-text")
    assert openmetrics.content.decode().rstrip().endswith("# EOF")


def test_metrics_are_not_found_for_an_address_outside_the_allowed_list():
    response = Client(REMOTE_ADDR="203.0.113.7").get("/metrics")
    assert response.status_code == 404
    assert response.json()["errorCode"] == "NOT_FOUND"
    assert b"gateway_" not in response.content


def test_metrics_through_a_proxy_are_not_found_even_from_loopback():
    # Behind the balancer the peer is the balancer itself, on an allowed address.
    response = Client(REMOTE_ADDR="127.0.0.1").get("/metrics", HTTP_X_FORWARDED_FOR="198.51.100.4")
    assert response.status_code == 404


@override_settings(METRICS_TOKEN=TOKEN)
def test_the_bearer_token_opens_metrics_from_anywhere_and_a_wrong_one_does_not():
    outside = Client(REMOTE_ADDR="203.0.113.7")
    assert outside.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    assert outside.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {'x' * 40}").status_code == 404
    assert outside.get("/metrics", HTTP_AUTHORIZATION=TOKEN).status_code == 404


@override_settings(METRICS_ALLOWED_IPS=[])
def test_an_empty_allowed_list_closes_metrics_even_to_loopback():
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 404


# --- request latency by route -----------------------------------------------------------------------

@pytest.mark.django_db
def test_request_latency_is_labelled_by_the_route_name_never_the_raw_path():
    before = value("gateway_http_request_duration_seconds_count", route="livez", method="GET", status="2xx")
    Client().get("/livez")
    assert value("gateway_http_request_duration_seconds_count", route="livez", method="GET", status="2xx") == before + 1
    Client().get("/api/v2/refunds/RF_no_such_refund")
    body = Client().get("/metrics").content.decode()
    assert "RF_no_such_refund" not in body
    Client().get("/no/such/address")
    assert value("gateway_http_request_duration_seconds_count", route="unmatched", method="GET", status="4xx") >= 1


# --- payments, refunds ------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_payments_are_counted_when_created_and_by_method_and_final_status():
    merchant = make_merchant()
    created = value("gateway_payments_created_total", flow="hosted")
    success = value("gateway_payments_final_total", method="UPI", status="SUCCESS")
    failed = value("gateway_payments_final_total", method="CARD", status="FAILED")
    make_payment(merchant, status=Payment.Status.SUCCESS)
    make_payment(merchant, status=Payment.Status.FAILED, payment_mode=Payment.Mode.CARD, card_last4="1111")
    assert value("gateway_payments_final_total", method="UPI", status="SUCCESS") == success + 1
    assert value("gateway_payments_final_total", method="CARD", status="FAILED") == failed + 1
    # make_payment writes its row directly; the count is the services' insert, made over the API.
    api = Client()
    response = api.post("/api/v2/payments", session_body(merchant), content_type="application/json",
                        HTTP_X_API_KEY=merchant.api_key, HTTP_X_MERCHANT_ID=merchant.code)
    assert response.status_code == 200, response.content
    assert value("gateway_payments_created_total", flow="hosted") == created + 1


@pytest.mark.django_db(transaction=True)
def test_a_change_that_rolls_back_counts_nothing():
    merchant = make_merchant()
    payment = make_payment(merchant, status=Payment.Status.PROCESSING)
    before = value("gateway_payments_final_total", method="UPI", status="SUCCESS")
    with pytest.raises(RuntimeError), transaction.atomic():
        metrics.on_commit_inc(metrics.payments_final.labels("UPI", "SUCCESS"))
        raise RuntimeError("rolled back")
    assert value("gateway_payments_final_total", method="UPI", status="SUCCESS") == before
    assert payment.pk


@pytest.mark.django_db(transaction=True)
def test_refunds_are_counted_by_status():
    merchant = make_merchant()
    payment = make_payment(merchant, status=Payment.Status.SUCCESS, amount=10_000)
    initiated, processed = value("gateway_refunds_total", status="INITIATED"), value("gateway_refunds_total", status="SUCCESS")
    created = refund_create(merchant=merchant.merchant, payment=payment, amount=4_000)
    assert value("gateway_refunds_total", status="INITIATED") == initiated + 1
    refund_mark_processed(refund_pk=created.refund.pk, bank_reference="BANKREF1")
    assert value("gateway_refunds_total", status="SUCCESS") == processed + 1


# --- sweeps -------------------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_the_expiry_sweep_is_timed_and_its_last_success_recorded_and_expiries_counted():
    merchant = make_merchant()
    payment = make_payment(merchant, status=Payment.Status.PENDING)
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=5))
    runs = value("gateway_sweep_duration_seconds_count", sweep="payments-expire")
    expired = value("gateway_payments_final_total", method="NONE", status="EXPIRED")
    started = timezone.now().timestamp()
    payments_expire_sweep()
    assert value("gateway_sweep_duration_seconds_count", sweep="payments-expire") == runs + 1
    assert value("gateway_sweep_last_success_timestamp_seconds", sweep="payments-expire") >= started - 1
    assert value("gateway_payments_final_total", method="NONE", status="EXPIRED") == expired + 1


def test_a_sweep_that_raises_counts_an_error_and_keeps_its_last_success():
    metrics.sweep_last_success.labels("test-sweep").set(123)
    errors = value("gateway_sweep_errors_total", sweep="test-sweep")
    with pytest.raises(ValueError), metrics.sweep_timed("test-sweep"):
        raise ValueError("boom")
    assert value("gateway_sweep_errors_total", sweep="test-sweep") == errors + 1
    assert value("gateway_sweep_last_success_timestamp_seconds", sweep="test-sweep") == 123


# --- webhooks -------------------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
@override_settings(WEBHOOK_RETRY_SCHEDULE=[3600])
def test_webhook_deliveries_are_counted_by_outcome_and_the_due_backlog_gauged():
    with Receiver() as receiver:
        receiver.respond_with(500)
        merchant = make_merchant(webhook_url=receiver.url("/hooks"))
        delivered, retry = (value("gateway_webhook_deliveries_total", outcome="delivered"),
                            value("gateway_webhook_deliveries_total", outcome="retry"))
        with transaction.atomic():
            for n in range(3):
                event_record(merchant=merchant.merchant, event_type="payment.success",
                             payload={"event": "payment.success", "n": n}, subject_id=f"SP{n}")
        # Deliveries made in a test's own process are not sent by a worker: the sweep sends them.
        WebhookDelivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
        deliveries_due_sweep()
    assert value("gateway_webhook_deliveries_total", outcome="retry") == retry + 1
    assert value("gateway_webhook_deliveries_total", outcome="delivered") == delivered + 2
    assert value("gateway_webhook_deliveries_due") == 0
    # The failed one is due again in an hour; once its time has come, the backlog counts it.
    WebhookDelivery.objects.filter(status="failed").update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    assert deliveries_due_count(now=timezone.now()) == 1


# --- the acquirer ----------------------------------------------------------------------------------------

class _Answers(BaseHTTPRequestHandler):
    def do_GET(self):
        status = 500 if "fail" in self.path else 404
        body = b'{"message":"no","code":"x","type":"invalid_request_error"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_acquirer_calls_are_counted_by_outcome_and_timed():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead_port = closed.getsockname()[1]
    try:
        live = CashfreeClient(base_url=f"http://127.0.0.1:{server.server_address[1]}", client_id="TEST1234567890",
                              client_secret="cfsk_ma_test_" + "s" * 30, timeout=5)
        dead = CashfreeClient(base_url=f"http://127.0.0.1:{dead_port}", client_id="TEST1234567890",
                              client_secret="cfsk_ma_test_" + "s" * 30, timeout=5)
        before = {o: value("gateway_acquirer_calls_total", acquirer="cashfree", outcome=o)
                  for o in ("error_5xx", "rejected", "no_answer")}
        timed = value("gateway_acquirer_call_duration_seconds_count", acquirer="cashfree")
        for client, order in ((live, "fail1"), (live, "missing1"), (dead, "any1")):
            with pytest.raises(CashfreeError):
                client.get_order(order)
    finally:
        server.shutdown()
    for outcome in before:
        assert value("gateway_acquirer_calls_total", acquirer="cashfree", outcome=outcome) == before[outcome] + 1, outcome
    assert value("gateway_acquirer_call_duration_seconds_count", acquirer="cashfree") == timed + 3


# --- Redis, the database, the processor's headroom ---------------------------------------------------------

@override_settings(REDIS_RETRY_AFTER_SECONDS=0)
def test_redis_errors_are_counted_by_what_called_redis():
    before = value("gateway_redis_errors_total", what="cache")
    redisguard.failed(ConnectionError("refused"), "cache")
    redisguard.reset()
    assert value("gateway_redis_errors_total", what="cache") == before + 1


def test_database_errors_reaching_a_request_are_counted():
    from django.db import OperationalError
    from gateway.platform.metrics import RequestMetricsMiddleware

    before = value("gateway_database_errors_total", kind="OperationalError")
    RequestMetricsMiddleware(lambda r: None).process_exception(None, OperationalError("server closed"))
    assert value("gateway_database_errors_total", kind="OperationalError") == before + 1


def test_the_processor_headroom_gauge_is_one_obvious_place_to_set():
    metrics.processor_ratelimit_headroom.labels("cashfree", "limiter").set(0.25)
    assert value("gateway_processor_ratelimit_headroom_ratio", acquirer="cashfree", source="limiter") == 0.25
