"""The processor's limit alerts and the disputes' alerts of deploy/prometheus/alerts.yml fire
on the series they are meant for, checked by Prometheus' own rule unit tests (`promtool test rules`), and the
headroom gauge is set by the client from both of its sources (issue 28)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from prometheus_client import REGISTRY

from payments.acquirer.cashfree.client import CashfreeClient

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def _promtool_test(tmp_path: Path, tests: list) -> None:
    spec = tmp_path / "rules_test.yml"  # JSON is YAML
    spec.write_text(json.dumps({"rule_files": [str(RULES)], "evaluation_interval": "1m", "tests": tests}))
    checked = subprocess.run([PROMTOOL, "test", "rules", str(spec)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_headroom_under_a_tenth_from_either_source_for_five_minutes_opens_a_ticket(tmp_path):
    headroom = 'gateway_processor_ratelimit_headroom_ratio{{acquirer="cashfree",source="{}",instance="web1"}}'
    _promtool_test(tmp_path, [{
        "interval": "1m",
        "input_series": [{"series": headroom.format("processor"), "values": "0.05x10"},
                         {"series": headroom.format("limiter"), "values": "0.9x10"}],
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "GatewayProcessorRateLimitNearlySpent", "exp_alerts": []},
            {"eval_time": "6m", "alertname": "GatewayProcessorRateLimitNearlySpent", "exp_alerts": [{
                "exp_labels": {"severity": "ticket", "acquirer": "cashfree"},
                "exp_annotations": {"summary": "cashfree: under 10% of the processor's request budget left "
                                               "for 5 minutes"}}]}],
    }])


def test_a_429_from_the_processor_opens_a_ticket_and_none_without(tmp_path):
    calls = 'gateway_acquirer_calls_total{{acquirer="cashfree",outcome="{}",instance="web1"}}'
    _promtool_test(tmp_path, [{
        "interval": "1m",
        "input_series": [{"series": calls.format("ok"), "values": "0+50x30"},
                         {"series": calls.format("rate_limited"), "values": "0x10 1x20"}],
        "alert_rule_test": [
            {"eval_time": "5m", "alertname": "GatewayProcessorRefusingCalls", "exp_alerts": []},
            {"eval_time": "12m", "alertname": "GatewayProcessorRefusingCalls", "exp_alerts": [{
                "exp_labels": {"severity": "ticket", "acquirer": "cashfree"},
                "exp_annotations": {"summary": "cashfree answered 429 (over its rate limit) in the last 10 minutes"}}]},
            {"eval_time": "25m", "alertname": "GatewayProcessorRefusingCalls", "exp_alerts": []}],
    }])


def _headroom(source: str) -> float | None:
    return REGISTRY.get_sample_value("gateway_processor_ratelimit_headroom_ratio",
                                     {"acquirer": "cashfree", "source": source})


def test_the_client_sets_the_headroom_from_its_limiter_and_from_cashfrees_headers(settings):
    client = CashfreeClient(base_url="http://127.0.0.1:9", client_id="GAUGE1234567890", client_secret="s3cret")
    client.calls_per_minute = 60  # ten calls a ten-second window

    def exchange(method, path, headers, payload):
        return 200, {"x-ratelimit-limit": "200", "x-ratelimit-remaining": "50"}, b'{"order_id": "o1"}'

    client._exchange = exchange
    client.get_order("o1")
    assert _headroom("processor") == 0.25
    assert 0 <= _headroom("limiter") <= 0.9


def test_an_unanswered_dispute_within_48_hours_pages_at_once_and_stops_when_answered(tmp_path):
    due = 'gateway_disputes_due_soon{instance="worker1"}'
    _promtool_test(tmp_path, [{
        "interval": "1m",
        "input_series": [{"series": due, "values": "0x5 2x5 0x5"}],
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "GatewayDisputeDeadlineNear", "exp_alerts": []},
            {"eval_time": "7m", "alertname": "GatewayDisputeDeadlineNear", "exp_alerts": [{
                "exp_labels": {"severity": "page"},
                "exp_annotations": {"summary": "2 dispute(s) due within 48 hours with no answer: the console's "
                                               "Needs attention lists them"}}]},
            {"eval_time": "13m", "alertname": "GatewayDisputeDeadlineNear", "exp_alerts": []}],
    }])


def test_a_disputes_sweep_silent_for_over_an_hour_opens_a_ticket(tmp_path):
    # The sweep's last success is its finish time in seconds: it keeps up for 30 minutes, then
    # stops at 1,800 s. Over an hour later (5,400 s) plus the rule's 5 minutes, the ticket opens.
    last = 'gateway_sweep_last_success_timestamp_seconds{sweep="disputes",instance="worker1"}'
    _promtool_test(tmp_path, [{
        "interval": "1m",
        "input_series": [{"series": last, "values": "0+60x30 1800x80"}],
        "alert_rule_test": [
            {"eval_time": "30m", "alertname": "GatewayDisputesSweepStalled", "exp_alerts": []},
            {"eval_time": "93m", "alertname": "GatewayDisputesSweepStalled", "exp_alerts": []},
            {"eval_time": "97m", "alertname": "GatewayDisputesSweepStalled", "exp_alerts": [{
                "exp_labels": {"severity": "ticket"},
                "exp_annotations": {"summary": "The disputes sweep has not finished for over an hour"}}]}],
    }])
