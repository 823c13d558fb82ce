"""The sandbox's payer's bank is reached through the sandbox acquirer's own package
(payments.acquirer.sandbox.payer), with no hook filled in at start: the acquirer sends the
approval task by its name, and the services ask the acquirer nothing once a PENDING answer is
recorded (docs/decisions.md, D16)."""
from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from gateway.celery import app
from payments.acquirer.sandbox import payer
from payments.models import Payment
from payments.sandbox_upi.tasks import upi_sandbox_approve_task
from payments.services.upi import upi_pay
from tests.support.factories import signed_body

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def s2s_payment(s2s_merchant, post):
    response = post(s2s_merchant, signed_body(s2s_merchant))
    assert response.status_code == 201, response.json()
    return Payment.objects.get(payment_id=response.json()["paymentId"])


@pytest.fixture
def sent(monkeypatch):
    """The messages the payer's bank publishes, as (task name, args, countdown, kwargs)."""
    messages = []

    def publish(batch, *, what, fallback):
        messages.extend((task.name, args, countdown, kwargs) for task, args, countdown, kwargs in batch)
        return True

    monkeypatch.setattr(payer, "tasks_publish", publish)
    return messages


def test_the_task_it_sends_by_name_is_the_one_the_worker_registers():
    import payments.tasks  # noqa: F401 - the worker registers every payments task from here

    assert payer.APPROVE_TASK in app.tasks and upi_sandbox_approve_task.name == payer.APPROVE_TASK


def test_success_sends_the_approval_with_the_delay_and_keeps_the_payment_open(s2s_payment, sent, settings):
    settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS = 7
    Payment.objects.filter(pk=s2s_payment.pk).update(expires_at=timezone.now() + payer.APPROVAL_MARGIN / 2)
    paid = upi_pay(payment_id=s2s_payment.pk, payer_vpa="success@sandbox")
    assert paid.status == "PROCESSING"
    assert sent == [(payer.APPROVE_TASK, (s2s_payment.pk,), 7.0, {"attempt": None})]
    assert paid.expires_at >= timezone.now() + payer.APPROVAL_MARGIN


def test_timeout_brings_the_deadline_earlier_and_sends_nothing(s2s_payment, sent, settings):
    settings.SANDBOX_UPI_TIMEOUT_SECONDS = 30
    paid = upi_pay(payment_id=s2s_payment.pk, payer_vpa="timeout@sandbox")
    assert paid.status == "PROCESSING" and sent == []
    assert paid.expires_at <= timezone.now() + timedelta(seconds=30)


def test_failure_is_declined_at_once_and_sends_nothing(s2s_payment, sent):
    assert upi_pay(payment_id=s2s_payment.pk, payer_vpa="failure@sandbox").status == "FAILED"
    assert sent == []


def test_the_acquirer_package_never_imports_what_stands_above_the_services():
    """The sandbox package imports neither payments.sandbox_upi nor a service, and the app
    fills nothing in for it at start."""
    above = ("payments.sandbox_upi", "payments.services", "payments.tasks", "gateway.inbound")
    found = []
    for path in sorted((ROOT / "payments/acquirer/sandbox").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [f"{path.name}: {name}" for name in names if name.startswith(above)]
    assert not found, found
    assert "sandbox" not in (ROOT / "payments/apps.py").read_text(encoding="utf-8")
