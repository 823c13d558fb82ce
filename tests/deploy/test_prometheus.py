"""A real Prometheus (Debian's package) scrapes both web nodes and a worker of the two-node
harness, loads deploy/prometheus/alerts.yml, and sees a burst of payments made through the
balancer; `promtool` checks the rules file on its own."""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.support.deploy import DEPLOY, Process
from tests.support.factories import make_merchant, signed_body
from tests.support.spare_redis import free_port
from tests.support.waiting import wait_until

PROMETHEUS, PROMTOOL = shutil.which("prometheus") or "/usr/bin/prometheus", shutil.which("promtool") or "/usr/bin/promtool"
RULES = DEPLOY / "prometheus" / "alerts.yml"
BURST = 12


def test_promtool_accepts_the_alerting_rules():
    checked = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout + checked.stderr


class Prometheus(Process):
    def __init__(self, web: list[int], workers: list[int]):
        self.port = free_port()
        folder = Path(tempfile.mkdtemp(prefix="gw-prometheus-"))
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [
                {"job_name": "gateway-web", "static_configs": [{"targets": [f"127.0.0.1:{p}" for p in web]}]},
                {"job_name": "gateway-worker", "static_configs": [{"targets": [f"127.0.0.1:{p}" for p in workers]}]},
            ],
        }
        (folder / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        super().__init__("prometheus", [PROMETHEUS, f"--config.file={folder / 'prometheus.yml'}",
                                        f"--storage.tsdb.path={folder / 'data'}",
                                        f"--web.listen-address=127.0.0.1:{self.port}"], {}, folder)

    def query(self, expr: str) -> list[dict]:
        address = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(address, timeout=10) as answer:
            body = json.load(answer)
        assert body["status"] == "success", body
        return body["data"]["result"]

    def scalar(self, expr: str) -> float:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else 0.0

    def answering(self) -> bool:
        try:
            return bool(self.query("up") is not None)
        except OSError:
            return False


@pytest.fixture
def prometheus(cluster):
    server = Prometheus([node.port for node in cluster.nodes], cluster.worker_metrics_ports[:1]).start()
    try:
        wait_until(server.answering, 60, lambda: f"Prometheus did not start:\n{server.log_text()[-3000:]}")
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def test_prometheus_scrapes_both_web_nodes_and_a_worker_and_sees_a_burst_of_payments(cluster, api, prometheus,
                                                                                  transactional_db):
    # Every target up: the two web nodes' /metrics (loopback, allowed) and the worker's port.
    wait_until(lambda: prometheus.scalar('sum(up{job=~"gateway-web|gateway-worker"})') == 3, 60,
               lambda: f"targets: {prometheus.query('up')}\n{prometheus.log_text()[-2000:]}")
    # The rules file loaded into the server itself.
    with urllib.request.urlopen(f"http://127.0.0.1:{prometheus.port}/api/v1/rules", timeout=10) as answer:
        groups = json.load(answer)["data"]["groups"]
    assert any(rule["name"] == "GatewaySweepLagging" for group in groups for rule in group["rules"])

    before = prometheus.scalar('sum(gateway_payments_created_total{flow="s2s"})')
    merchant = make_merchant()
    for _ in range(BURST):
        answer = api.post("/api/v2/payments/s2s", signed_body(merchant), format="json", **merchant.headers)
        assert answer.status_code in (200, 201), answer.content
    # The counters of both nodes (each the sum of its gunicorn workers) add up to the burst.
    wait_until(lambda: prometheus.scalar('sum(gateway_payments_created_total{flow="s2s"})') - before == BURST, 30,
               lambda: f"created: {prometheus.query('gateway_payments_created_total')}")
    per_node = prometheus.query('sum by (instance) (gateway_payments_created_total{flow="s2s"})')
    assert len(per_node) == 2 and all(float(row["value"][1]) > 0 for row in per_node), per_node
    # Request latency by route name, from the balancer's traffic.
    assert prometheus.scalar('sum(gateway_http_request_duration_seconds_count{route="s2s-payment-create"})') >= BURST
    # The worker runs beat's sweeps: the expiry sweep's last success is recent.
    wait_until(lambda: prometheus.scalar('time() - max(gateway_sweep_last_success_timestamp_seconds'
                                         '{job="gateway-worker", sweep="payments-expire"})') < 30
               and prometheus.query('gateway_sweep_last_success_timestamp_seconds{job="gateway-worker"}'), 60,
               lambda: f"worker sweeps: {prometheus.query('gateway_sweep_duration_seconds_count')}")


def test_metrics_are_not_served_through_the_balancer(cluster):
    """Through HAProxy the request carries X-Forwarded-For: refused by address whatever the peer."""
    import urllib.error

    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(cluster.url + "/metrics", timeout=10)
    assert refused.value.code == 404
