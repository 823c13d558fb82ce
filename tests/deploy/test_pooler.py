"""Every `.iterator()` path of the gateway through deploy/pgbouncer/pgbouncer.ini in transaction
mode, with DATABASE_POOLER=transaction: the console's settlement export and `reencrypt_secrets`
read every row, while other clients' transactions take the pooler's server connections in
between fetches, as real traffic does. Without the setting the same read breaks
(`cursor "_django_curs_..." does not exist`), which is why the setting exists.

The in-process connection is pointed at PgBouncer with the database settings gateway/settings.py
builds from the environment an operator would set (read in a subprocess, so this process's own
settings stay as they are)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from datetime import date, datetime, time
from io import StringIO
from zoneinfo import ZoneInfo

import psycopg
import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import DatabaseError, connection

from gateway.console.settlement import settlement_rows
from payments.models import IdempotencyRecord, Payment
from tests.support.deploy import ROOT, PgBouncer
from tests.support.factories import make_merchant, make_payment, make_refund, session_body
from tests.support.worker import database_url_for_tests

DAY = date(2025, 3, 14)
IST = ZoneInfo("Asia/Kolkata")


def database_settings(env: dict) -> dict:
    """DATABASES["default"] as gateway/settings.py builds it from `env` (in a fresh process)."""
    code = "import json, gateway.settings as s; print(json.dumps(s.DATABASES['default'], default=str))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={**{k: v for k, v in os.environ.items() if not k.startswith("DATABASE_")},
                              **env}, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def bouncer(transactional_db):
    with PgBouncer(database_url_for_tests()) as running:
        yield running


@contextmanager
def through(bouncer: PgBouncer, pooler: str | None):
    """This process's connection goes through `bouncer`, configured as DATABASE_POOLER=`pooler` says."""
    env = {"DATABASE_URL": bouncer.url, **({"DATABASE_POOLER": pooler} if pooler else {})}
    wanted = {"DISABLE_SERVER_SIDE_CURSORS": False, **database_settings(env)}
    keys = ("NAME", "HOST", "PORT", "OPTIONS", "DISABLE_SERVER_SIDE_CURSORS")
    saved = {key: connection.settings_dict.get(key) for key in keys}
    connection.close()
    connection.settings_dict.update({key: wanted[key] for key in keys})
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(saved)


@contextmanager
def another_client_busy(bouncer: PgBouncer):
    """Another client in a transaction: it holds the server connection PgBouncer hands out next
    (the one just released, LIFO), so this process's next statement runs on another one."""
    with psycopg.connect(bouncer.url.replace("postgres://", "postgresql://")) as other:
        other.execute("SELECT 1")  # BEGIN implicitly: held until the block ends
        yield


def settled_day(shop, count: int) -> None:
    for i in range(count):
        payment = make_payment(shop, amount=10_000 + i)
        Payment.objects.filter(pk=payment.pk).update(
            completed_at=datetime.combine(DAY, time(10, i % 60), tzinfo=IST))
        make_refund(payment, amount=100, status="SUCCESS",
                    processed_at=datetime.combine(DAY, time(11, i % 60), tzinfo=IST),
                    bank_refund_reference=f"RF{payment.pk}")


def read_export_with_traffic_between_fetches(bouncer, merchant) -> list[list[str]]:
    rows = settlement_rows(merchant, DAY)
    first = [next(rows), next(rows)]  # the header, and the first payment: the cursor is open
    with another_client_busy(bouncer):
        return first + list(rows)


def test_the_settlement_export_reads_every_row_through_transaction_mode_pgbouncer(bouncer):
    shop = make_merchant(code="SETTLE")
    settled_day(shop, 5)
    with through(bouncer, "transaction"):
        records = read_export_with_traffic_between_fetches(bouncer, shop.merchant)
    kinds = [row[0] for row in records[1:]]
    assert kinds == ["payment"] * 5 + ["refund"] * 5 + ["total_payments", "total_refunds", "net"]


def test_without_the_setting_the_export_breaks_behind_pgbouncer(bouncer):
    shop = make_merchant(code="SETTLE")
    settled_day(shop, 2)
    with through(bouncer, None), pytest.raises((DatabaseError, psycopg.Error), match="cursor .* does not exist"):
        read_export_with_traffic_between_fetches(bouncer, shop.merchant)


def test_reencrypt_secrets_rewrites_every_kept_secret_through_transaction_mode_pgbouncer(
        bouncer, api, settings, monkeypatch):
    from gateway.core import crypto

    default = list(settings.GATEWAY_ENCRYPTION_KEYS)
    old_key, new_key = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    shop = make_merchant(code="ROTATE")
    settings.GATEWAY_ENCRYPTION_KEYS = [old_key, *default]
    for n in range(3):
        answer = api.post("/api/v2/payments", session_body(shop), format="json",
                          HTTP_X_API_KEY=shop.api_key, HTTP_X_IDEMPOTENCY_KEY=f"rot-{n}")
        assert answer.status_code == 200, answer.json()
    settings.GATEWAY_ENCRYPTION_KEYS = [new_key, old_key, *default]

    # Between the cursor's fetches (the kept secrets are read with .iterator(), the merchants'
    # before them are not), another client's transaction takes the server the cursor lives on.
    reencrypt, busy = crypto.reencrypt, []
    kept = {body["clientSecretEncrypted"] for body in IdempotencyRecord.objects.values_list("response_body", flat=True)}

    def reencrypt_with_traffic(token):
        if token in kept and not busy:
            busy.append(another_client_busy(bouncer))
            busy[0].__enter__()
        return reencrypt(token)

    monkeypatch.setattr(crypto, "reencrypt", reencrypt_with_traffic)
    out = StringIO()
    try:
        with through(bouncer, "transaction"):
            call_command("reencrypt_secrets", stdout=out)
    finally:
        for held in busy:
            held.__exit__(None, None, None)
    assert busy, "the command read no kept secret"
    assert "re-encrypted 3 checkout session secret(s)" in out.getvalue()
    tokens = [body["clientSecretEncrypted"] for body in IdempotencyRecord.objects.values_list("response_body", flat=True)]
    assert len(tokens) == 3 and all(Fernet(new_key.encode()).decrypt(t.encode()) for t in tokens)


def test_the_pooler_setting_turns_off_server_side_cursors_and_prepared_statements():
    behind = database_settings({"DATABASE_URL": "postgres://u:p@127.0.0.1:6432/gateway",
                                "DATABASE_POOLER": "transaction"})
    direct = database_settings({"DATABASE_URL": "postgres://u:p@127.0.0.1:5432/gateway"})
    assert behind["DISABLE_SERVER_SIDE_CURSORS"] is True
    assert "prepare_threshold" not in behind["OPTIONS"] and "server_side_binding" not in behind["OPTIONS"]
    assert not direct.get("DISABLE_SERVER_SIDE_CURSORS") and direct["OPTIONS"]["prepare_threshold"] == 2


@pytest.mark.parametrize("env, message", [
    ({"DATABASE_POOLER": "session"}, "DATABASE_POOLER must be 'none' or 'transaction'"),
    ({"DATABASE_POOLER": "transaction", "DATABASE_PREPARED_STATEMENTS": "true"},
     "DATABASE_PREPARED_STATEMENTS=true cannot work with DATABASE_POOLER=transaction"),
])
def test_a_pooler_setting_that_cannot_be_honoured_is_refused_at_start(env, message):
    with pytest.raises(subprocess.CalledProcessError) as raised:
        subprocess.run([sys.executable, "-c", "import gateway.settings"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, check=True,
                       env={**os.environ, "DATABASE_URL": "postgres://u:p@127.0.0.1:6432/gateway",
                            **env})
    assert message in raised.value.stderr
