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
