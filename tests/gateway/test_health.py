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
