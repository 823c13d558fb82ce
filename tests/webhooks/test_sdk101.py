"""The official SDK 1.0.1's webhook verifier (sabpaisa_sdk.Webhooks) against real deliveries.

It measures the signature's age in seconds and ours is in milliseconds (interface.md): with its
default tolerance it refuses every delivery, and with `tolerance=0` (docs/webhooks.md) it
verifies them. The SDK lives in .venv-sdk101 (scripts/test makes it; it shares its
distribution name with 3.0.0 in .venv), so the merchant's side runs there, in a subprocess:
docs/examples/webhook_receiver_sabpaisa_sdk.py as a real server on loopback, and a short
script for the default-tolerance check. (tests/support/sdk101.py on branch i17-clients runs
API calls; a receiver is a long-running server, so this file starts its own.)
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.waiting import wait_until
from tests.support.worker import CeleryWorker
from tests.webhooks.test_upstream_compat import paid
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

ROOT = Path(__file__).resolve().parents[2]
SDK_PYTHON = ROOT / ".venv-sdk101" / "bin" / "python"
EXAMPLE = ROOT / "docs" / "examples" / "webhook_receiver_sabpaisa_sdk.py"


@pytest.fixture(autouse=True)
def _sdk_installed():
    """Fail, never skip: scripts/test always makes the SDK's venv, so its absence is a broken setup."""
    assert SDK_PYTHON.exists(), f"{SDK_PYTHON} is missing: scripts/test creates it (sabpaisa-python==1.0.1)"

class SdkReceiver:
    """The example receiver, run by the SDK's Python, on an ephemeral loopback port."""

    def __init__(self, secret: str):
        env = {**os.environ, "WEBHOOK_SECRET": secret, "LOOPBACK_ONLY": "1", "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([str(SDK_PYTHON), str(EXAMPLE), "0"], env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        line = self.process.stdout.readline()
        assert line.startswith("listening on port "), line + self.process.stdout.read()
        self.url = f"http://127.0.0.1:{int(line.split()[-1])}/webhook"

    def lines(self) -> list[str]:
        """What it printed after "listening": one line per event it handled."""
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        return out.splitlines()


def sdk_verify(header: str, body: bytes, secret: str, tolerance: int | None) -> str:
    """What `Webhooks(secret).verify_signature(header, body[, tolerance=...])` says, in the SDK."""
    script = (
        "import sys, json\n"
        "from sabpaisa_sdk import Webhooks, InvalidWebhookSignatureError\n"
        "a = json.loads(sys.stdin.read())\n"
        "kw = {} if a['tolerance'] is None else {'tolerance': a['tolerance']}\n"
        "try:\n"
        "    print(Webhooks(a['secret']).verify_signature(a['header'], a['body'].encode('latin-1'), **kw))\n"
        "except InvalidWebhookSignatureError as exc:\n"
        "    print('refused:', exc)\n"
    )
    done = subprocess.run([str(SDK_PYTHON), "-c", script], capture_output=True, text=True, timeout=60,
                          input=json.dumps({"header": header, "body": body.decode("latin-1"), "secret": secret,
                                            "tolerance": tolerance}))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_sdk_verifier_accepts_a_real_delivery_with_tolerance_0_and_refuses_it_with_its_default(
        hooked, receiver):
    payment = paid(hooked.merchant)
    delivery_attempt_run(WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id).pk)
    (request,) = receiver.requests
    header = request.headers["X-SabPaisa-Signature"]

    refused = sdk_verify(header, request.body, hooked.webhook_secret, None)
    assert refused.startswith("refused: Webhook timestamp is") and "tolerance: 300s" in refused
    assert sdk_verify(header, request.body, hooked.webhook_secret, 0) == "True"
    # tolerance=0 turns off only the age check: the HMAC is still checked.
    assert sdk_verify(header, request.body, "whsec_someone_else", 0).startswith("refused: Webhook signature mismatch")
    assert sdk_verify(header, request.body + b" ", hooked.webhook_secret, 0).startswith("refused:")


def test_a_receiver_built_on_the_sdk_accepts_a_real_delivery_from_the_worker(transactional_db, tmp_path):
    from tests.support.factories import make_merchant

    tm = make_merchant()
    sdk_receiver = SdkReceiver(tm.webhook_secret)
    try:
        tm.merchant.webhook_url = sdk_receiver.url
        tm.merchant.save()
        with CeleryWorker(env={"WEBHOOK_RETRY_SCHEDULE": "1,1,1"}, log_dir=tmp_path):
            payment = paid(tm.merchant)
            delivery = wait_until(lambda: WebhookDelivery.objects.filter(
                event__subject_id=payment.sabpaisa_txn_id, status=WebhookDelivery.Status.DELIVERED).first(),
                message="the SDK receiver did not acknowledge the delivery")
    finally:
        lines = sdk_receiver.lines()
    attempt = delivery.attempt_rows.get()
    assert attempt.http_status == 200 and delivery.attempts == 1
    assert f"{payment.sabpaisa_txn_id}_SUCCESS payment.success 150000" in lines


def test_the_sdk_receiver_refuses_a_delivery_signed_with_another_secret(transactional_db, tmp_path):
    from tests.support.factories import make_merchant

    tm = make_merchant()
    sdk_receiver = SdkReceiver("whsec_not_this_merchants")
    try:
        tm.merchant.webhook_url = sdk_receiver.url
        tm.merchant.save()
        payment = paid(tm.merchant)
        delivery = delivery_attempt_run(WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id).pk)
    finally:
        lines = sdk_receiver.lines()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert delivery.attempt_rows.get().http_status == 401
    assert lines == []  # nothing handed to the merchant's handler


def test_the_sdk_receiver_still_holding_the_old_secret_accepts_during_a_rotation_grace(transactional_db, admin_user):
    from gateway.platform.models import Merchant
    from gateway.platform.services import merchant_rotate_webhook_secret
    from tests.support.factories import make_merchant

    tm = make_merchant()
    sdk_receiver = SdkReceiver(tm.webhook_secret)  # not yet switched to the new secret
    try:
        merchant_rotate_webhook_secret(merchant=tm.merchant, grace_seconds=3600, actor=admin_user)
        Merchant.objects.filter(pk=tm.merchant.pk).update(webhook_url=sdk_receiver.url)
        payment = paid(Merchant.objects.get(pk=tm.merchant.pk))
        delivery = delivery_attempt_run(WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id).pk)
    finally:
        lines = sdk_receiver.lines()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert lines == [f"{payment.sabpaisa_txn_id}_SUCCESS payment.success 150000"]
