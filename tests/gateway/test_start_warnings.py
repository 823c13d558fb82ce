"""At start, staging says what its defaults open up (issue 29, finding 5): the development keys
published in this repository, ALLOWED_HOSTS '*' and webhooks to private addresses each get a
system check warning naming what they allow; the tests-only setting that lets a request's
webhookUrl be private is refused in production."""
from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.core import checks

from tests.gateway.test_settings import REAL_FERNET, REAL_SECRET, manage_check


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


def test_production_without_a_shared_redis_warns_that_replays_are_remembered_per_process(settings):
    settings.IS_PRODUCTION = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    found = ids()
    assert "gateway.W016" in found and "per process" in found["gateway.W016"].msg
    settings.CACHES = {"default": {"BACKEND": "gateway.perf.cache.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}}
    assert "gateway.W016" not in ids()
