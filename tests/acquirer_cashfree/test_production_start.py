"""GATEWAY_ENV=production with Cashfree: refused without its credentials, naming what is
missing; started with them (manage.py check in a fresh process, as an operator starts it).
Tokens still answer FEATURE_NOT_AVAILABLE there."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "GATEWAY_ENV": "production",
    "DJANGO_SECRET_KEY": "a-real-production-secret-key-of-enough-length-0123456789abcdef",
    "GATEWAY_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
    "GATEWAY_PUBLIC_URL": "https://pay.example.com",
}
CASHFREE = {"GATEWAY_ACQUIRER": "cashfree", "CASHFREE_CLIENT_ID": "CF1234567890",
            "CASHFREE_CLIENT_SECRET": "cfsk_ma_prod_0123456789abcdef"}


def run(args: list[str], **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("GATEWAY_", "DJANGO_", "CASHFREE_")) and k != "DEFAULT_RATE_LIMIT_PER_SECOND"}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**base, **env})


def test_production_with_cashfree_and_its_credentials_starts():
    result = run(["check"], **PRODUCTION, **CASHFREE)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("missing, named", [
    (("CASHFREE_CLIENT_ID", "CASHFREE_CLIENT_SECRET"), "needs CASHFREE_CLIENT_ID and CASHFREE_CLIENT_SECRET"),
    (("CASHFREE_CLIENT_ID",), "needs CASHFREE_CLIENT_ID"),
    (("CASHFREE_CLIENT_SECRET",), "needs CASHFREE_CLIENT_SECRET"),
])
def test_production_with_cashfree_without_its_credentials_is_refused_naming_them(missing, named):
    env = {k: v for k, v in CASHFREE.items() if k not in missing}
    result = run(["check"], **PRODUCTION, **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and named in result.stderr


def test_production_without_an_acquirer_is_still_refused():
    result = run(["check"], **PRODUCTION)
    assert result.returncode != 0 and "needs a real acquirer" in result.stderr


@pytest.mark.parametrize("env", [{}, PRODUCTION], ids=["staging", "production"])
def test_an_unknown_acquirer_is_refused_at_start(env):
    result = run(["check"], **env, GATEWAY_ACQUIRER="stripe")
    assert result.returncode != 0
    assert "GATEWAY_ACQUIRER='stripe' is not an acquirer" in result.stderr


def test_production_refuses_a_plain_http_cashfree_address():
    result = run(["check"], **PRODUCTION, **CASHFREE, CASHFREE_BASE_URL="http://127.0.0.1:4010/pg")
    assert result.returncode != 0 and "CASHFREE_BASE_URL must be an https:// address" in result.stderr


# What the started process holds: the address by environment, the webhook secret, the methods
# offered, and the token API's answer.
PROBE = """
import json
from django.conf import settings
from django.test import Client
from payments.services.acquirer_methods import acquirer_methods
from payments.acquirer import get_acquirer
response = Client().get("/api/v2/tokens/tok_doesnotexist0000000000", HTTP_HOST="pay.example.com", secure=True)
print(json.dumps({"acquirer": get_acquirer().name, "base": settings.CASHFREE_BASE_URL,
                  "webhook_secret": settings.CASHFREE_WEBHOOK_SECRET, "methods": sorted(acquirer_methods()),
                  "token_status": response.status_code, "token_error": response.json().get("errorCode")}))
"""


def probe(**env) -> dict:
    result = run(["shell", "-c", PROBE], **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_talks_to_cashfrees_production_address_and_keeps_tokens_unavailable():
    held = probe(**PRODUCTION, **CASHFREE)
    assert held["acquirer"] == "cashfree"
    assert held["base"] == "https://api.cashfree.com/pg"
    # Cashfree signs webhooks with the client secret unless it gave another.
    assert held["webhook_secret"] == CASHFREE["CASHFREE_CLIENT_SECRET"]
    # Cards in Cashfree's own fields (Cashfree.js), production's default card mode (issue 28).
    assert held["methods"] == ["CARD", "NB", "NEFT", "RTGS", "UPI", "WALLET"]
    assert (held["token_status"], held["token_error"]) == (403, "FEATURE_NOT_AVAILABLE")


def test_staging_with_cashfree_talks_to_its_sandbox_and_a_separate_webhook_secret_is_kept():
    held = probe(**CASHFREE, CASHFREE_WEBHOOK_SECRET="whsec_separate")
    assert held["base"] == "https://sandbox.cashfree.com/pg"
    assert held["webhook_secret"] == "whsec_separate"


def test_production_offers_our_card_form_only_with_the_pci_dss_declaration():
    held = probe(**PRODUCTION, **CASHFREE, CARD_FORM_MODE="own", PCI_DSS_COMPLIANT="true")
    assert held["methods"] == ["CARD", "NB", "NEFT", "RTGS", "UPI", "WALLET"]
