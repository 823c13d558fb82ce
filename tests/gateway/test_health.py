"""GET /healthz: 200 JSON when the database and broker answer, 503 otherwise."""
import socket

import pytest
from django.db import OperationalError

from gateway.celery import app as celery_app

pytestmark = pytest.mark.django_db


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_healthz_is_200_json_when_database_and_broker_answer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}
    assert response["X-Trace-Id"]


def test_healthz_needs_no_credentials_and_sets_no_rate_limit_headers(client):
    response = client.get("/healthz")
    assert "X-RateLimit-Limit" not in response


def test_healthz_is_503_when_the_broker_is_unreachable(client, monkeypatch, json_log):
    monkeypatch.setattr(celery_app.conf, "broker_url", f"redis://127.0.0.1:{closed_port()}/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"] == {"database": "ok", "broker": "down"}
    # An error response, so it is in the envelope as well.
    assert body["success"] is False and body["errorCode"] == "SERVICE_UNAVAILABLE"
    assert body["traceId"] == response["X-Trace-Id"]
    assert body["error"] == {"code": "SERVICE_UNAVAILABLE", "message": body["errorMessage"]}
    text, lines = json_log()
    assert any("broker unreachable" in line["message"] and line["traceId"] == body["traceId"] for line in lines)


def test_healthz_is_503_when_the_database_is_unreachable(client, monkeypatch):
    from gateway.platform import views

    class DeadConnection:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(views, "connection", DeadConnection())
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "down", "broker": "ok"}


def test_healthz_head_is_allowed_for_load_balancers(client):
    assert client.head("/healthz").status_code == 200


# --- /livez and /readyz: the probes a supervisor and the balancer use (docs/operations.md) ----

def test_livez_answers_without_touching_the_database_or_the_broker(client, monkeypatch, django_assert_num_queries):
    from gateway.platform import views

    class DeadConnection:
        def cursor(self):
            raise AssertionError("liveness touched the database")

    monkeypatch.setattr(views, "connection", DeadConnection())
    monkeypatch.setattr(celery_app.conf, "broker_url", f"redis://127.0.0.1:{closed_port()}/0")
    with django_assert_num_queries(0):
        response = client.get("/livez")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert client.head("/livez").status_code == 200


def test_readyz_stays_ready_while_the_broker_is_unreachable(client, monkeypatch):
    monkeypatch.setattr(celery_app.conf, "broker_url", f"redis://127.0.0.1:{closed_port()}/0")
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok"}}
    assert client.get("/healthz").status_code == 503  # /healthz keeps CONTRACT.md's meaning


def test_readyz_is_503_in_the_envelope_when_the_database_is_unreachable(client, monkeypatch):
    from gateway.platform import views

    class DeadConnection:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(views, "connection", DeadConnection())
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"] == {"database": "down"} and body["errorCode"] == "SERVICE_UNAVAILABLE"
    assert client.head("/readyz").status_code == 503
