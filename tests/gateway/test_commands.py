"""`manage.py create_merchant`: one JSON object on stdout and nothing else; the key works and
the secrets are stored encrypted."""
import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from gateway.platform.models import ApiKey, AuditRecord, Merchant

ROOT = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.mark.django_db(transaction=True)
@pytest.mark.urls("tests.gateway.urls")
def test_create_merchant_prints_exactly_one_json_line_whose_key_works(api):
    """Run as an operator would, in a process of its own, against the test database."""
    result = subprocess.run(
        [sys.executable, "manage.py", "create_merchant", "--code", "CLI1", "--name", "Cli Store",
         "--webhook-url", "https://shop.example/hooks", "--s2s", "--rate-limit", "25"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "DATABASE_URL": _database_url()},
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    credentials = json.loads(lines[0])
    assert set(credentials) == {"merchantId", "apiKey", "secretKey", "webhookSecret"}
    assert credentials["merchantId"] == "CLI1"

    merchant = Merchant.objects.get(code="CLI1")
    assert (merchant.name, merchant.s2s_enabled, merchant.rate_limit, merchant.webhook_url) == (
        "Cli Store", True, 25, "https://shop.example/hooks")
    assert merchant.secret_key == credentials["secretKey"]
    assert merchant.webhook_secret == credentials["webhookSecret"]

    # No secret appears in the stored rows.
    stored = str(Merchant.objects.filter(pk=merchant.pk).values().get())
    stored += str(list(ApiKey.objects.filter(merchant=merchant).values()))
    stored += str(list(AuditRecord.objects.filter(merchant=merchant).values()))
    for secret in (credentials["apiKey"], credentials["secretKey"], credentials["webhookSecret"]):
        assert secret not in stored

    response = api.get("/t/whoami", HTTP_X_API_KEY=credentials["apiKey"])
    assert response.status_code == 200
    assert response.json() == {"merchantId": "CLI1"}
    assert response["X-RateLimit-Limit"] == "25"


@pytest.mark.django_db
def test_create_merchant_defaults(capsys):
    out = StringIO()
    call_command("create_merchant", "--code", "CLI2", "--name", "Plain", stdout=out)
    credentials = json.loads(out.getvalue())
    assert capsys.readouterr().out == ""
    merchant = Merchant.objects.get(code=credentials["merchantId"])
    assert (merchant.s2s_enabled, merchant.rate_limit, merchant.webhook_url, merchant.is_active) == (
        False, None, "", True)
    assert merchant.signed_requests_required is False


@pytest.mark.django_db
def test_create_merchant_can_require_signed_requests():
    out = StringIO()
    call_command("create_merchant", "--code", "CLI2S", "--name", "Strict", "--signed-requests", stdout=out)
    assert Merchant.objects.get(code=json.loads(out.getvalue())["merchantId"]).signed_requests_required is True


@pytest.mark.django_db
def test_create_merchant_is_audited_with_who_ran_it_and_no_secrets():
    out = StringIO()
    call_command("create_merchant", "--code", "CLI3", "--name", "Audited", stdout=out)
    credentials = json.loads(out.getvalue())
    record = AuditRecord.objects.get(merchant__code="CLI3", action="merchant.create")
    assert record.actor_name.startswith("cli:")
    assert record.after["code"] == "CLI3"
    dumped = json.dumps([record.before, record.after])
    assert credentials["secretKey"] not in dumped and credentials["apiKey"] not in dumped


@pytest.mark.django_db
@pytest.mark.parametrize("args, field", [
    (["--code", "x", "--name", "N"], "code"),
    (["--code", "has space", "--name", "N"], "code"),
    (["--code", "OK1", "--name", ""], "name"),
    (["--code", "OK1", "--name", "N", "--rate-limit", "0"], "rateLimit"),
    (["--code", "OK1", "--name", "N", "--webhook-url", "ftp://shop.example/"], "webhookUrl"),
    (["--code", "OK1", "--name", "N", "--webhook-url", "https://" + "a" * 500 + ".example/"], "webhookUrl"),
])
def test_create_merchant_refuses_bad_input_without_printing_anything(args, field, capsys):
    out = StringIO()
    with pytest.raises(CommandError, match=field):
        call_command("create_merchant", *args, stdout=out)
    assert out.getvalue() == "" and capsys.readouterr().out == ""
    assert not Merchant.objects.filter(code="OK1").exists()


@pytest.mark.django_db
def test_create_merchant_refuses_a_code_already_taken():
    call_command("create_merchant", "--code", "TAKEN", "--name", "First", stdout=StringIO())
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_merchant", "--code", "TAKEN", "--name", "Second", stdout=StringIO())


@pytest.mark.django_db
def test_demo_merchant_refuses_to_run_in_production(settings, capsys):
    settings.IS_PRODUCTION = True
    with pytest.raises(CommandError, match="production"):
        call_command("demo_merchant")
    assert not Merchant.objects.filter(code="DEMO").exists()
    assert capsys.readouterr().out == ""
