"""gateway.perf.db: the health check between requests reads the socket instead of asking the server,
and still notices a connection the server has ended."""
from __future__ import annotations

import select
import time

import psycopg
import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def _terminate(pid: int) -> None:
    """End a session from outside, as a restart or an operator would."""
    params = connection.settings_dict
    with psycopg.connect(dbname=params["NAME"], user=params["USER"], password=params["PASSWORD"],
                         host=params["HOST"] or None, port=params["PORT"] or None, autocommit=True) as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0] is True


def _wait_readable(fd: int, timeout: float = 10.0) -> None:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout
    while not poller.poll(100):
        assert time.monotonic() < deadline, "the server never closed the socket"


def test_the_backend_is_ours():
    assert connection.settings_dict["ENGINE"] == "gateway.perf.db" and connection.vendor == "postgresql"


def test_a_healthy_idle_connection_passes_without_a_statement(monkeypatch):
    connection.ensure_connection()

    def no_statement(*args, **kwargs):
        raise AssertionError("the health check sent a statement")

    # The patch ends with the check: what runs after the test (tests/conftest.py's refund-totals
    # check) may send statements again.
    with monkeypatch.context() as patched:
        patched.setattr(connection.connection, "cursor", no_statement)
        assert connection.is_usable() is True


def test_a_connection_the_server_ended_fails_the_check_and_is_replaced():
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        old_pid = cursor.fetchone()[0]
    _terminate(old_pid)
    _wait_readable(connection.connection.fileno())
    assert connection.is_usable() is False
    # What Django does at the start of a request: the check fails, so it reconnects.
    connection.health_check_done = False
    connection.close_if_health_check_failed()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != old_pid
