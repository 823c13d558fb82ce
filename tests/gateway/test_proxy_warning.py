"""A proxy in front with TRUSTED_PROXY_COUNT = 0 makes every customer one address for the
per-address limits: the service says so, once per process and at start in production."""
from __future__ import annotations

import logging

import pytest
from django.core import checks
from django.test import Client

from gateway.core import clientip

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _not_warned_yet(monkeypatch):
    monkeypatch.setattr(clientip, "_proxy_warned", False)


def proxy_warnings(caplog):
    return [r for r in caplog.records if r.name == "gateway.clientip" and r.levelno == logging.WARNING]


def test_a_forwarded_request_from_a_private_address_warns_once_when_no_proxy_is_trusted(settings, caplog):
    settings.TRUSTED_PROXY_COUNT = 0
    behind_proxy = Client(REMOTE_ADDR="10.0.0.5")
    behind_proxy.get("/healthz", HTTP_X_FORWARDED_FOR="203.0.113.9")
    behind_proxy.get("/healthz", HTTP_X_FORWARDED_FOR="203.0.113.10")
    warnings = proxy_warnings(caplog)
    assert len(warnings) == 1
    assert "TRUSTED_PROXY_COUNT" in warnings[0].getMessage() and "10.0.0.5" in warnings[0].getMessage()


@pytest.mark.parametrize(("remote", "headers", "proxies"), [
    ("8.8.4.4", {"HTTP_X_FORWARDED_FOR": "198.51.100.1"}, 0),      # a client sending the header itself
    ("127.0.0.1", {}, 0),                                          # local, no forwarding header
    ("127.0.0.1", {"HTTP_X_FORWARDED_FOR": "198.51.100.1"}, 1),    # the proxy is configured
])
def test_no_warning_when_no_proxy_is_likely_or_it_is_configured(settings, caplog, remote, headers, proxies):
    settings.TRUSTED_PROXY_COUNT = proxies
    Client(REMOTE_ADDR=remote).get("/healthz", **headers)
    assert proxy_warnings(caplog) == []


def test_the_system_check_warns_in_production_without_trusted_proxies(settings):
    settings.IS_PRODUCTION, settings.TRUSTED_PROXY_COUNT = True, 0
    assert [m.id for m in checks.run_checks(tags=[checks.Tags.security])].count("gateway.W001") == 1
    settings.TRUSTED_PROXY_COUNT = 1
    assert "gateway.W001" not in [m.id for m in checks.run_checks(tags=[checks.Tags.security])]
    settings.IS_PRODUCTION, settings.TRUSTED_PROXY_COUNT = False, 0
    assert "gateway.W001" not in [m.id for m in checks.run_checks(tags=[checks.Tags.security])]
