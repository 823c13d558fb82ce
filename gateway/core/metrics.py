"""Every Prometheus metric the gateway exports, defined here and nowhere else (docs/operations.md,
"What to alert on", says which ones an operator watches and why).

The metrics come from prometheus_client, the Prometheus project's own Python client. Under
gunicorn and Celery's prefork pool one process serves /metrics for many, so the client runs in
its multiprocess mode whenever PROMETHEUS_MULTIPROC_DIR is set (gunicorn.conf.py and
gateway/celery.py set it before this module is first imported); each process then writes its
values to files there and the scrape adds them up. Without it (tests, runserver) the values live
in this process.

Counts that belong to a state change are made on commit (`on_commit_inc`): a transaction that
rolls back counted nothing. Labels are always from small fixed sets (a route's name, never the
raw path; a status; an outcome), so no label can grow without bound.

`processor_ratelimit_headroom` is the share of the processor's request budget still free, 1
meaning untouched and 0 exhausted, from two sources (label `source`): "limiter", our outbound
limiter's slots left in its current window (payments.acquirer.limits, set before each call), and
"processor", what the processor last announced (its x-ratelimit-remaining over
x-ratelimit-limit, set after each answer that carries them).
"""
from __future__ import annotations

import time
from contextlib import contextmanager

from django.db import transaction
from prometheus_client import Counter, Gauge, Histogram

# Latency buckets for web requests and outside calls, in seconds: fine below 100 ms, where the
# API lives, and out to the 10 s an acquirer or webhook call may take.
LATENCY_BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SWEEP_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

http_request_duration = Histogram(
    "gateway_http_request_duration_seconds", "Time to answer a web request, by route name and status class.",
    ["route", "method", "status"], buckets=LATENCY_BUCKETS)

payments_created = Counter(
    "gateway_payments_created_total", "Payments created, by flow (hosted or s2s).", ["flow"])
payments_final = Counter(
    "gateway_payments_final_total", "Payments that reached a final status, by method and status.",
    ["method", "status"])

acquirer_calls = Counter(
    "gateway_acquirer_calls_total", "Calls to the acquirer's API, by acquirer and outcome.",
    ["acquirer", "outcome"])
acquirer_call_duration = Histogram(
    "gateway_acquirer_call_duration_seconds", "Time of one call to the acquirer's API, by acquirer.",
    ["acquirer"], buckets=LATENCY_BUCKETS)

webhook_deliveries = Counter(
    "gateway_webhook_deliveries_total",
    "Webhook delivery attempts by outcome: delivered, retry (failed, another attempt is scheduled) or dead.",
    ["outcome"])
webhook_deliveries_due = Gauge(
    "gateway_webhook_deliveries_due", "Webhook deliveries due now and not yet sent, as the last sweep counted them.",
    multiprocess_mode="mostrecent")

refunds = Counter(
    "gateway_refunds_total", "Refunds by status: INITIATED when created, then SUCCESS or FAILED.", ["status"])

disputes = Counter(
    "gateway_disputes_total", "Disputes by status: the status each was opened in, then each it moved to.",
    ["status"])
dispute_deadline_alerts = Counter(
    "gateway_dispute_deadline_alerts_total",
    "Disputes that came within 48 h of their respond_by with no answer (one each: the deadline alert fired).")
disputes_due_soon = Gauge(
    "gateway_disputes_due_soon",
    "Disputes awaiting the merchant's answer whose respond_by is within 48 h, as the last disputes sweep counted.",
    multiprocess_mode="mostrecent")
disputes_open_amount = Gauge(
    "gateway_disputes_open_amount_paise", "Paise at risk in disputes not yet decided, as the last sweep counted.",
    multiprocess_mode="mostrecent")

sweep_duration = Histogram(
    "gateway_sweep_duration_seconds", "Time of one run of a beat sweep, by sweep.", ["sweep"], buckets=SWEEP_BUCKETS)
sweep_last_success = Gauge(
    "gateway_sweep_last_success_timestamp_seconds",
    "Unix time the sweep last finished without an error; time() minus this is the sweep's lag.",
    ["sweep"], multiprocess_mode="max")
sweep_errors = Counter(
    "gateway_sweep_errors_total", "Sweep runs that raised, by sweep.", ["sweep"])

redis_errors = Counter(
    "gateway_redis_errors_total", "Redis calls that failed (the gateway failed open), by what called it.", ["what"])
database_errors = Counter(
    "gateway_database_errors_total", "Database errors that reached a request or task, by kind.", ["kind"])

processor_ratelimit_headroom = Gauge(
    "gateway_processor_ratelimit_headroom_ratio",
    "Share of the processor's request budget still free (1 untouched, 0 exhausted): by our limiter's "
    "current window (source limiter) or as the processor last announced it (source processor).",
    ["acquirer", "source"], multiprocess_mode="mostrecent")


# Routing across acquirers (payments.services.routing, acquirer_health; docs/decisions.md D24).
# The out-of-rotation gauge is set by one beat sweep (every web process would otherwise report its
# own moment's view, and "mostrecent" across processes only makes sense for one writer); the
# counters are counted where routing decides, in whichever process that is, and add up.
acquirer_failovers = Counter(
    "gateway_acquirer_failovers_total",
    "Attempts that failed over: by the acquirer that failed technically, the one tried next, the method "
    "and the failure's class (unavailable: refused, timeout, 5xx, 429; error: credentials, unreadable answer).",
    ["from_acquirer", "to_acquirer", "method", "reason"])
acquirer_routed_past = Counter(
    "gateway_acquirer_routed_past_total",
    "Payments routed with an acquirer out of rotation for the method moved to the end of the route.",
    ["acquirer", "method"])
acquirer_probes = Counter(
    "gateway_acquirer_probes_total",
    "Payments that probed an acquirer out of rotation (one per 30 s per acquirer and method while it is out).",
    ["acquirer", "method"])
acquirer_out_of_rotation = Gauge(
    "gateway_acquirer_out_of_rotation",
    "1 while the acquirer is out of rotation for the method, 0 while in, as the last rotation sweep read it.",
    ["acquirer", "method"], multiprocess_mode="mostrecent")

def on_commit_inc(counter) -> None:
    """Count one when the transaction open now commits (at once when none is open)."""
    transaction.on_commit(counter.inc)


@contextmanager
def sweep_timed(sweep: str):
    """Time one run of a beat sweep; a run that finishes sets its last-success time, one that
    raises counts an error (and raises on)."""
    started = time.perf_counter()
    try:
        yield
    except BaseException:
        sweep_errors.labels(sweep).inc()
        raise
    finally:
        sweep_duration.labels(sweep).observe(time.perf_counter() - started)
    sweep_last_success.labels(sweep).set(time.time())


@contextmanager
def acquirer_call_timed(acquirer: str):
    """Time one call to an acquirer's API. The block sets `outcome[0]` to what came back
    ("ok", "declined", "rejected", "error_5xx", "no_answer"); left unset, a block that raises is
    "no_answer" and one that returns "ok"."""
    outcome: list[str] = []
    started = time.perf_counter()
    try:
        yield outcome
    except BaseException:
        if not outcome:
            outcome.append("no_answer")
        raise
    finally:
        acquirer_call_duration.labels(acquirer).observe(time.perf_counter() - started)
        acquirer_calls.labels(acquirer, outcome[0] if outcome else "ok").inc()
