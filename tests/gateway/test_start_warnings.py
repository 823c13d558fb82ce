"""At start, staging says what its defaults open up (issue 29, finding 5): the development keys
published in this repository, ALLOWED_HOSTS '*' and webhooks to private addresses each get a
system check warning naming what they allow; the tests-only setting that lets a request's
webhookUrl be private is refused in production."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet
from django.core import checks

from tests.gateway.test_settings import REAL_FERNET, REAL_SECRET, ROOT, manage_check


def ids(**_):
    return {m.id: m for m in checks.run_checks(tags=[checks.Tags.security])}


def test_staging_defaults_warn_and_say_what_each_allows():
    result = manage_check()
    assert result.returncode == 0, result.stderr  # warnings: the quick start still starts
    text = result.stderr
    for check_id, allows in [("gateway.W011", "forge"),
                             ("gateway.W012", "decrypt every merchant's secret key"),
                             ("gateway.W013", "any host"),
                             ("gateway.W014", "loopback, private")]:
        assert check_id in text, text
        assert allows in text


def test_each_warning_goes_once_its_setting_is_closed(settings):
    found = ids()
    assert {"gateway.W011", "gateway.W012", "gateway.W013", "gateway.W014"} <= set(found)
    settings.SECRET_KEY = REAL_SECRET
    settings.GATEWAY_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    settings.ALLOWED_HOSTS = ["pay.example.in"]
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    assert not {"gateway.W011", "gateway.W012", "gateway.W013", "gateway.W014"} & set(ids())


def test_the_tests_only_private_webhook_url_setting_warns_in_staging_and_is_an_error_in_production(settings):
    settings.WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE = True
    found = ids()
    assert found["gateway.W015"].level == checks.WARNING
    settings.IS_PRODUCTION = True
    found = ids()
    assert found["gateway.E011"].level == checks.ERROR and "gateway.W015" not in found


@pytest.mark.parametrize("env, check_id", [({"DJANGO_ALLOWED_HOSTS": "*"}, "gateway.W013"),
                                           ({"WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "true"}, "gateway.W014")])
def test_production_warns_too_when_opened_up(env, check_id):
    result = manage_check(GATEWAY_ENV="production", DJANGO_SECRET_KEY=REAL_SECRET, GATEWAY_ENCRYPTION_KEYS=REAL_FERNET,
                          GATEWAY_ACQUIRER="cashfree", CASHFREE_CLIENT_ID="id", CASHFREE_CLIENT_SECRET="secret",
                          GATEWAY_PUBLIC_URL="https://pay.example.in", **env)
    assert check_id in result.stderr, result.stderr


def test_production_without_a_shared_redis_is_an_error_that_says_what_breaks(settings):
    settings.IS_PRODUCTION = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    found = ids()
    assert found["gateway.E016"].level == checks.ERROR
    assert "per process" in found["gateway.E016"].msg and "broker" in found["gateway.E016"].msg
    settings.CACHES = {"default": {"BACKEND": "gateway.perf.cache.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}}
    assert "gateway.E016" not in ids()


def test_production_on_sqlite_is_an_error_naming_database_url(settings):
    settings.IS_PRODUCTION = True
    settings.DATABASES = {**settings.DATABASES,
                          "default": {**settings.DATABASES["default"], "ENGINE": "django.db.backends.sqlite3"}}
    found = ids()
    assert found["gateway.E017"].level == checks.ERROR and "DATABASE_URL" in found["gateway.E017"].msg


PRODUCTION = dict(GATEWAY_ENV="production", DJANGO_SECRET_KEY=REAL_SECRET, GATEWAY_ENCRYPTION_KEYS=REAL_FERNET,
                  GATEWAY_ACQUIRER="cashfree", CASHFREE_CLIENT_ID="id", CASHFREE_CLIENT_SECRET="secret",
                  GATEWAY_PUBLIC_URL="https://pay.example.in", DJANGO_ALLOWED_HOSTS="pay.example.in")


def deploy_check(**env) -> subprocess.CompletedProcess:
    """`manage.py check --deploy` as an operator runs it, with only the environment given."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("GATEWAY_", "DJANGO_", "DATABASE_", "REDIS_", "CASHFREE_", "CELERY_"))
            and k != "DEFAULT_RATE_LIMIT_PER_SECOND"}
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**base, **env})


def test_check_deploy_refuses_production_on_sqlite_without_redis():
    """It passed before issue 28: a file database and a folder broker that no second node shares."""
    result = deploy_check(**PRODUCTION)
    assert result.returncode != 0
    assert "gateway.E016" in result.stderr and "REDIS_URL" in result.stderr
    assert "gateway.E017" in result.stderr and "DATABASE_URL" in result.stderr


def test_check_deploy_passes_production_on_postgresql_with_redis():
    result = deploy_check(**PRODUCTION, DATABASE_URL=os.environ["DATABASE_URL"], REDIS_URL=os.environ["REDIS_URL"])
    assert result.returncode == 0, result.stderr
    assert "gateway.E016" not in result.stderr and "gateway.E017" not in result.stderr
