"""The two-node harness for the tests of this folder: one cluster per session (tests/support/deploy.py),
two web nodes behind deploy/'s HAProxy, two workers and one beat, through deploy/'s PgBouncer
to the test database, on a Redis of its own.

Tests written for one process elsewhere in the suite run here unchanged (test_two_node.py
imports them): these fixtures stand in for theirs. `live_server` is the balancer (HTTPS, its
certificate trusted by this process's urllib for the session), `api` sends the in-process test
client's calls over HTTP to the balancer, and `worker` is the cluster's workers."""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.deploy import Cluster
from tests.support.spare_redis import SpareRedis
from tests.support.worker import database_url_for_tests

# The settings the imported tests give their own worker and server, for every process of the cluster.
CLUSTER_ENV = {
    "SANDBOX_UPI_SUCCESS_DELAY_SECONDS": "1",
    "SANDBOX_UPI_TIMEOUT_SECONDS": "2",
    "WEBHOOK_RETRY_SCHEDULE": "1,1,2,2,2,2,2,2,2,2",
    "REFUND_PENDING_SWEEP_AFTER_SECONDS": "2",
    "REFUND_CLAIM_SECONDS": "10",
    "API_KEY_CACHE_SECONDS": "0",
}


# Package scope: the cluster stops when this folder's last test ends. Its beat and workers sweep
# the test database, so the session scope it once had let them expire and deliver other folders'
# payments and webhooks for the rest of the run (tests/conftest.py now refuses that).
@pytest.fixture(scope="package")
def cluster_redis():
    redis = SpareRedis().start()
    yield redis
    redis.stop()


@pytest.fixture(scope="package")
def cluster(django_db_setup, cluster_redis):
    from django.conf import settings

    running = Cluster(database_url_for_tests(), cluster_redis.url, env=CLUSTER_ENV,
                      encryption_keys=",".join(settings.GATEWAY_ENCRYPTION_KEYS))
    # Every process's log is kept in var/deploy-last-run/ (ignored by git), to read after a failure.
    keep = Path(__file__).resolve().parents[2] / "var" / "deploy-last-run"
    try:
        running.start()
        # urllib in this process trusts the balancer's certificate (and nothing else) for the session.
        default = ssl._create_default_https_context
        ssl._create_default_https_context = running.balancer.ssl_context
        try:
            yield running
        finally:
            ssl._create_default_https_context = default
    finally:
        running.close(keep_logs=keep)


class _NoSettings:
    def enable(self):
        pass

    def disable(self):
        pass


class Balancer:
    """What the suite reads of pytest-django's live_server (its `url`), for the balancer."""

    def __init__(self, cluster: Cluster):
        self.url = cluster.url
        self._live_server_modified_settings = _NoSettings()  # pytest-django's helper toggles it


@pytest.fixture
def live_server(cluster, transactional_db):
    return Balancer(cluster)


class Answer:
    def __init__(self, status: int, body: bytes, headers):
        self.status_code, self.content, self.headers = status, body, headers

    def json(self):
        return json.loads(self.content)

    def __getitem__(self, name):
        return self.headers[name]


class BalancerClient:
    """The calls the suite makes on DRF's APIClient (`post(path, data, format="json", **META)`,
    `get(path, **META)`), sent over HTTPS to the balancer instead of into this process."""

    def __init__(self, base_url: str):
        self.base_url = base_url

    def _send(self, method: str, path: str, data=None, meta=None) -> Answer:
        headers = {"Content-Type": "application/json"}
        for key, value in (meta or {}).items():
            if key.startswith("HTTP_"):
                headers[key[5:].replace("_", "-").title()] = value
        body = json.dumps(data).encode() if data is not None else None
        request = urllib.request.Request(self.base_url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return Answer(answer.status, answer.read(), answer.headers)
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.read(), error.headers)

    def post(self, path, data=None, format=None, **meta):
        return self._send("POST", path, data, meta)

    def get(self, path, **meta):
        return self._send("GET", path, None, meta)


@pytest.fixture
def api(cluster):
    return BalancerClient(cluster.url)


@pytest.fixture
def worker(cluster):
    class Workers:
        def log_text(self) -> str:
            return cluster.logs()

    return Workers()
