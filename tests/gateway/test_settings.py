"""GATEWAY_ENV=production refuses to start on development secrets or without an acquirer."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
REAL_SECRET = "a-real-production-secret-key-of-enough-length-0123456789abcdef"
REAL_FERNET = Fernet.generate_key().decode()


def manage_check(**env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("GATEWAY_", "DJANGO_")) and k != "DEFAULT_RATE_LIMIT_PER_SECOND"}
    return subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**base, **env})


@pytest.mark.parametrize("env, message", [
    ({}, "DJANGO_SECRET_KEY must be set in production"),
    ({"DJANGO_SECRET_KEY": REAL_SECRET}, "GATEWAY_ENCRYPTION_KEYS must be set in production"),
    ({"DJANGO_SECRET_KEY": REAL_SECRET, "GATEWAY_ENCRYPTION_KEYS": f"{REAL_FERNET},ZGV2LW9ubHktZ2F0ZXdheS1lbmNyeXB0aW9uLWtleSE="},
     "GATEWAY_ENCRYPTION_KEYS must be set in production"),
    ({"DJANGO_SECRET_KEY": REAL_SECRET, "GATEWAY_ENCRYPTION_KEYS": REAL_FERNET}, "needs a real acquirer"),
    ({"DJANGO_SECRET_KEY": REAL_SECRET, "GATEWAY_ENCRYPTION_KEYS": REAL_FERNET, "GATEWAY_ACQUIRER": "sandbox"},
     "needs a real acquirer"),
    ({"DJANGO_SECRET_KEY": REAL_SECRET, "GATEWAY_ENCRYPTION_KEYS": REAL_FERNET, "GATEWAY_ACQUIRER": "bank",
      "DJANGO_DEBUG": "true"}, "DJANGO_DEBUG"),
], ids=["dev-secret-key", "dev-encryption-key", "dev-encryption-key-among-others", "no-acquirer",
        "sandbox-acquirer", "debug"])
def test_production_refuses_to_start(env, message):
    result = manage_check(GATEWAY_ENV="production", **env)
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.parametrize("keys, message", [
    ("not-a-fernet-key", "GATEWAY_ENCRYPTION_KEYS"),
    (" , ", "GATEWAY_ENCRYPTION_KEYS"),
])
def test_malformed_encryption_keys_are_refused_at_start(keys, message):
    result = manage_check(GATEWAY_ENCRYPTION_KEYS=keys)
    assert result.returncode != 0
    assert message in result.stderr


def test_unknown_gateway_env_is_refused():
    result = manage_check(GATEWAY_ENV="prod")
    assert result.returncode != 0
    assert "GATEWAY_ENV must be 'staging' or 'production'" in result.stderr


def test_staging_defaults_start():
    result = manage_check()
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("value", ["-1", "61", "soon"])
def test_a_result_page_wait_it_cannot_honour_is_refused_at_start(value):
    result = manage_check(CHECKOUT_RESULT_REDIRECT_SECONDS=value)
    assert result.returncode != 0
    assert "CHECKOUT_RESULT_REDIRECT_SECONDS" in result.stderr


@pytest.mark.parametrize("env", [{"WEB_WORKER_TIMEOUT_SECONDS": "30"},   # gunicorn's default: the wait itself
                                 {"WEB_WORKER_TIMEOUT_SECONDS": "89"},   # no room for the acquirer call after it
                                 {"IDEMPOTENCY_WAIT_SECONDS": "100"},
                                 {"IDEMPOTENCY_WAIT_SECONDS": "20"}],    # shorter than the key's lease
                         ids=["timeout-equals-wait", "no-room-after-the-wait", "long-wait", "wait-below-lease"])
def test_an_idempotency_wait_not_well_below_the_worker_timeout_is_refused_at_start(env):
    result = manage_check(**env)
    assert result.returncode != 0
    assert "payments.E001" in result.stderr and "WEB_WORKER_TIMEOUT_SECONDS" in result.stderr


def test_gunicorn_kills_a_worker_only_well_after_the_idempotency_wait():
    """gunicorn.conf.py sets the timeout the start-up check judges (gunicorn's default, 30 s,
    equalled the 30 s wait, so a waiting request could be killed instead of answered)."""
    import subprocess
    import sys

    from django.conf import settings

    from payments.acquirer.base import CALL_TIME_LIMIT

    # Read in a process of its own, as gunicorn's master reads it: the file sets up the metrics
    # folder in os.environ, which this test process must not inherit.
    read = subprocess.run([sys.executable, "-c", "import runpy; print(runpy.run_path('gunicorn.conf.py')['timeout'])"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert read.returncode == 0, read.stderr
    timeout = int(read.stdout.split()[-1])
    assert timeout == settings.WEB_WORKER_TIMEOUT_SECONDS
    assert timeout >= settings.IDEMPOTENCY_WAIT_SECONDS + CALL_TIME_LIMIT.total_seconds()


def test_the_deployment_keeps_gunicorns_timeout_and_the_balancer_waits_longer():
    """The systemd unit must not override gunicorn.conf.py's timeout with --timeout (it set 30 s,
    the wait itself), and HAProxy must wait for an answer longer than gunicorn does."""
    import re

    from django.conf import settings

    unit = (ROOT / "deploy/systemd/gateway-web.service").read_text()
    (start,) = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert "--timeout" not in start.replace("--graceful-timeout", "") and " -t " not in start
    balancer = (ROOT / "deploy/haproxy/haproxy.cfg").read_text()
    server = int(re.search(r"^\s*timeout server (\d+)s$", balancer, re.M).group(1))
    assert server > settings.WEB_WORKER_TIMEOUT_SECONDS
