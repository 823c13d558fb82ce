"""Routing's alerts in deploy/prometheus/alerts.yml (issue 33; docs/operations.md, "What to alert
on") fire on the series they are meant for, by Prometheus' own rule unit tests."""
from __future__ import annotations

from tests.metrics.test_alert_rules import _promtool_test

OUT = 'gateway_acquirer_out_of_rotation{{acquirer="{}",method="UPI",instance="worker1"}}'


def test_an_acquirer_out_of_rotation_for_five_minutes_opens_a_ticket_and_the_method_does_not_page(tmp_path):
    _promtool_test(tmp_path, [{
        "interval": "1m",
        "input_series": [{"series": OUT.format("razorpay"), "values": "0 1x10 0x5"},
                         {"series": OUT.format("cashfree"), "values": "0x16"}],
        "alert_rule_test": [
            {"eval_time": "4m", "alertname": "GatewayAcquirerOutOfRotation", "exp_alerts": []},
            {"eval_time": "7m", "alertname": "GatewayAcquirerOutOfRotation", "exp_alerts": [{
                "exp_labels": {"severity": "ticket", "acquirer": "razorpay", "method": "UPI"},
                "exp_annotations": {"summary": "razorpay out of rotation for UPI for 5 minutes"}}]},
            {"eval_time": "7m", "alertname": "GatewayMethodDownOnEveryAcquirer", "exp_alerts": []},
            {"eval_time": "14m", "alertname": "GatewayAcquirerOutOfRotation", "exp_alerts": []}],
    }])


def test_every_acquirer_of_a_method_out_pages_within_a_minute_or_two(tmp_path):
    _promtool_test(tmp_path, [{
        "interval": "1m",
        "input_series": [{"series": OUT.format("razorpay"), "values": "1x10"},
                         {"series": OUT.format("cashfree"), "values": "0x3 1x7"}],
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "GatewayMethodDownOnEveryAcquirer", "exp_alerts": []},
            {"eval_time": "5m", "alertname": "GatewayMethodDownOnEveryAcquirer", "exp_alerts": [{
                "exp_labels": {"severity": "page", "method": "UPI"},
                "exp_annotations": {"summary": "UPI: every acquirer out of rotation for a minute"}}]}],
    }])


def test_failovers_piling_up_open_a_ticket(tmp_path):
    failovers = ('gateway_acquirer_failovers_total{from_acquirer="razorpay",to_acquirer="cashfree",'
                 'method="UPI",reason="unavailable",instance="web1"}')
    _promtool_test(tmp_path, [{
        "interval": "1m",
        "input_series": [{"series": failovers, "values": "0x5 0+5x10"}],
        "alert_rule_test": [
            {"eval_time": "5m", "alertname": "GatewayAcquirerFailingOver", "exp_alerts": []},
            {"eval_time": "12m", "alertname": "GatewayAcquirerFailingOver", "exp_alerts": [{
                "exp_labels": {"severity": "ticket", "from_acquirer": "razorpay", "method": "UPI"},
                "exp_annotations": {"summary": "razorpay: over 10 UPI attempts failed over to another acquirer "
                                               "in 10 minutes"}}]}],
    }])
