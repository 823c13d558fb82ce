"""Late approvals reverse themselves through the acquirer (payments.services.reversals).

Real PostgreSQL with committed transactions; the acquirer is the sandbox, or the scripted
double where a test must decide when (and whether) it answers."""
from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from gateway.celery import app
from payments.acquirer.base import AcquirerUnavailable
from payments.acquirer.sandbox.acquirer import REVERSAL_REFUSED_AMOUNT
from payments.locks import lock_payment
from payments.models import Payment, PaymentEvent, Reversal
from payments.services import hosted
from payments.services.reversals import (
    payment_late_approval_handle,
    reversal_retry_delay,
    reversal_submit,
    reversals_pending_process,
)
from payments.services.transitions import payment_expire, payment_mark_failed
from payments.sandbox_upi.approvals import upi_sandbox_approve
from payments.services.upi import upi_pay
from tests.payments.hosted.doubles import Request, scripted_acquirer
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status
R = Reversal.Status


@pytest.fixture
def shop():
    return make_merchant(code="LATE")


@pytest.fixture
def acquirer(monkeypatch):
    yield from scripted_acquirer(monkeypatch)


def session(tm, amount: int = 50000) -> Payment:
    return hosted.hosted_payment_create(merchant=tm.merchant, merchant_txn_id=f"ORD-{Payment.objects.count() + 1}",
                                        amount=amount, currency="INR",
                                        return_url="https://shop.example.in/return").payment


def expired(tm, amount: int = 50000) -> Payment:
    payment = session(tm, amount)
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now())
    assert payment_expire(payment_id=payment.pk) is not None
    return Payment.objects.get(pk=payment.pk)


def reversal_story(payment: Payment) -> list[tuple[str, str]]:
    return [(e.from_status, e.to_status) for e in payment.events.filter(kind=PaymentEvent.Kind.REVERSAL)
            if e.to_status]


def test_a_upi_approval_that_finds_the_payment_expired_is_reversed(shop):
    payment = session(shop)
    upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox")  # the customer's UPI app approves
    # The worker and the beat were both down past the deadline, then the expiry ran first.
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now())
    assert payment_expire(payment_id=payment.pk) is not None
    assert upi_sandbox_approve(payment_id=payment.pk) is None
    [reversal] = Reversal.objects.filter(payment=payment)
    assert reversal.status == R.PENDING and reversal.step == "upi_sandbox_approve"
    assert reversal_submit(reversal_pk=reversal.pk).status == R.REVERSED
    assert reversal_story(payment) == [("", "PENDING"), ("PENDING", "REVERSED")]


def test_one_approval_reported_twice_is_reversed_once(shop):
    payment = expired(shop)
    first = payment_late_approval_handle(payment_id=payment.pk, step="bank_authorize", bank_rrn="111122223333")
    again = payment_late_approval_handle(payment_id=payment.pk, step="bank_authorize_status", bank_rrn="111122223333")
    assert first.pk == again.pk and Reversal.objects.count() == 1
    reversal_submit(reversal_pk=first.pk)
    assert reversal_submit(reversal_pk=first.pk) is None  # final: not sent again
    assert reversal_story(payment) == [("", "PENDING"), ("PENDING", "REVERSED")]


def test_an_approval_of_a_failed_payment_is_reversed(shop):
    payment = session(shop)
    payment_mark_failed(payment_id=payment.pk, reason="cancelled by the customer")
    reversal = payment_late_approval_handle(payment_id=payment.pk, step="upi_pay", bank_rrn="444455556666")
    assert (reversal.status, reversal.payment_status) == (R.PENDING, S.FAILED)


def test_the_approval_a_payment_succeeded_with_is_never_reversed(shop):
    payment = session(shop)
    hosted.hosted_bank_start(payment=payment, mode="NB", bank_code="SBIN")
    paid = hosted.hosted_bank_complete(payment=Payment.objects.get(pk=payment.pk), approved=True)
    assert paid.status == S.SUCCESS
    # Reported twice (a duplicate approval message), or as an abandoned attempt's by mistake.
    assert payment_late_approval_handle(payment_id=payment.pk, step="bank_authorize", bank_rrn="999988887777") is None
    assert payment_late_approval_handle(payment_id=payment.pk, step="bank_authorize", bank_rrn=paid.bank_rrn,
                                        abandoned=True) is None
    assert not Reversal.objects.exists()


def test_an_abandoned_attempts_approval_is_reversed_even_when_the_payment_succeeded(shop):
    payment = session(shop)
    hosted.hosted_bank_start(payment=payment, mode="NB", bank_code="SBIN")
    paid = hosted.hosted_bank_complete(payment=Payment.objects.get(pk=payment.pk), approved=True)
    # The customer had first asked for a UPI request, then paid by net banking; the UPI app's
    # approval comes in afterwards: charged twice, unless it is given back.
    reversal = payment_late_approval_handle(payment_id=payment.pk, step="upi_pay", bank_rrn="123412341234",
                                            abandoned=True)
    assert (reversal.status, reversal.payment_status) == (R.PENDING, S.SUCCESS)
    assert reversal_submit(reversal_pk=reversal.pk).status == R.REVERSED
    assert Payment.objects.get(pk=payment.pk).bank_rrn == paid.bank_rrn


def test_a_reversal_the_acquirer_refuses_fails_for_a_person_to_settle(shop, caplog):
    payment = expired(shop, amount=REVERSAL_REFUSED_AMOUNT)
    reversal = payment_late_approval_handle(payment_id=payment.pk, step="card_verify_otp", bank_rrn="101010101010")
    with caplog.at_level(logging.ERROR, logger="payments.reversals"):
        failed = reversal_submit(reversal_pk=reversal.pk)
    assert failed.status == R.FAILED and "refused" in failed.failure_reason and not failed.reference
    assert "a person must return the money" in caplog.text
    assert reversal_story(payment) == [("", "PENDING"), ("PENDING", "FAILED")]


def test_a_reversal_without_an_answer_is_sent_again_after_a_backoff(shop, acquirer):
    payment = expired(shop)
    reversal = payment_late_approval_handle(payment_id=payment.pk, step="card_verify_otp", bank_rrn="202020202020")
    acquirer.fail("reverse", AcquirerUnavailable("timed out"))
    now = timezone.now()
    waiting = reversal_submit(reversal_pk=reversal.pk, now=now)
    assert waiting.status == R.PENDING and waiting.next_attempt_at == now + reversal_retry_delay(1)
    assert reversals_pending_process(now=now + timedelta(seconds=1)) == 0  # backing off
    acquirer.fail("reverse", None)
    assert reversals_pending_process(now=waiting.next_attempt_at) == 1
    done = Reversal.objects.get(pk=reversal.pk)
    assert (done.status, done.attempts) == (R.REVERSED, 2)
    # Both sends carried the same id: an acquirer that did act on the first reverses once.
    sent_as = {kwargs["reversal_id"] for method, kwargs in acquirer.kwargs if method == "reverse"}
    assert sent_as == {f"rev_{reversal.pk}"}


def test_no_lock_is_held_while_the_acquirer_reverses(shop, acquirer):
    payment = expired(shop)
    reversal = payment_late_approval_handle(payment_id=payment.pk, step="card_verify_otp", bank_rrn="303030303030")
    gate = acquirer.gate("reverse")
    sending = Request(lambda: reversal_submit(reversal_pk=reversal.pk))
    gate.wait_entered()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '1s'")
        lock_payment(payment.pk)
        Reversal.objects.select_for_update(nowait=True).get(pk=reversal.pk)
    # And a second sender meanwhile (the sweep) finds it claimed and leaves it.
    assert reversal_submit(reversal_pk=reversal.pk) is None
    gate.open()
    assert sending.finish().status == R.REVERSED
    assert len(acquirer.called("reverse")) == 1


def test_a_reversal_is_queued_for_the_worker_once_recorded(shop, monkeypatch):
    sent = []
    from payments.tasks import reversal_submit_task

    monkeypatch.setattr(reversal_submit_task, "apply_async", lambda args, **kwargs: sent.append(args))
    payment = expired(shop)
    reversal = payment_late_approval_handle(payment_id=payment.pk, step="card_verify_otp", bank_rrn="404040404040")
    assert sent == [(reversal.pk,)]


def test_the_reversals_sweep_is_scheduled():
    from django.conf import settings

    app.loader.import_default_modules()
    entry = settings.CELERY_BEAT_SCHEDULE["reversals-pending"]
    assert entry["task"] == "payments.tasks.reversals_pending_sweep" and entry["task"] in app.tasks



def test_a_reversals_status_is_written_in_one_place():
    """Every status change of a reversal (the acquirer's answer, a person's settlement) goes
    through payments.services.reversal_sending.reversal_status_set, which checks the table and
    tells the payment's story: no other function of payments assigns `status` on a reversal."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    writers = set()
    for path in (root / "payments").rglob("*.py"):
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                targets = node.targets if isinstance(node, ast.Assign) else []
                for target in targets:
                    for leaf in (target.elts if isinstance(target, ast.Tuple) else [target]):
                        if (isinstance(leaf, ast.Attribute) and leaf.attr == "status"
                                and isinstance(leaf.value, ast.Name) and "reversal" in leaf.value.id):
                            writers.add(f"{path.relative_to(root)}:{function.name}")
    assert writers == {"payments/services/reversal_sending.py:reversal_status_set"}, writers
