"""payments.services.upi.upi_unanswered_reconcile: a UPI pay request cut off after the payer's
claim committed (the process or the database went down before the acquirer's answer was
recorded) is settled by asking the acquirer where it stands, instead of waiting for expiry."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from payments.acquirer.base import AcquirerUnavailable
from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from payments.models import Payment, PaymentEvent
from payments.services.acquirer_answers import STATUS_QUERY_AFTER
from payments.services.upi import (
    upi_cut_off_requests,
    upi_pay,
    upi_unanswered_reconcile,
)
from payments.sandbox_upi.approvals import upi_sandbox_approvals_due
from tests.support.factories import signed_body


@pytest.fixture
def cut_off(s2s_merchant, post):
    """An S2S payment whose pay call from `vpa` was cut off: claimed (as upi_pay's _claim
    commits it) and no answer recorded, `ago` before now."""
    def make(vpa: str, ago: timedelta = STATUS_QUERY_AFTER + timedelta(seconds=1)) -> Payment:
        response = post(s2s_merchant, signed_body(s2s_merchant))
        assert response.status_code == 201, response.json()
        payment = Payment.objects.get(payment_id=response.json()["paymentId"])
        Payment.objects.filter(pk=payment.pk).update(payer_vpa=vpa, updated_at=timezone.now() - ago)
        return payment

    return make


def _answers(payment: Payment) -> list[dict]:
    return [e.detail for e in PaymentEvent.objects.filter(payment=payment, kind=PaymentEvent.Kind.ACQUIRER)
            if e.detail.get("step") == "upi_status"]


def test_an_approved_request_ends_in_success_as_the_payer_was_told(cut_off):
    payment = cut_off("success@sandbox")
    assert upi_unanswered_reconcile() == 1
    payment.refresh_from_db()
    assert payment.status == "PROCESSING" and _answers(payment)[0]["outcome"] == "pending"
    # The approval follows as after any pay call (the task, or the sweep standing in for it).
    upi_sandbox_approvals_due(now=timezone.now() + timedelta(minutes=1))
    payment.refresh_from_db()
    assert payment.status == "SUCCESS" and payment.bank_rrn


def test_a_declined_request_fails_the_payment(cut_off):
    payment = cut_off("failure@sandbox")
    assert upi_unanswered_reconcile() == 1
    payment.refresh_from_db()
    assert payment.status == "FAILED" and _answers(payment)[0]["outcome"] == "declined"


def test_a_request_the_acquirer_never_got_gives_the_claim_back(cut_off):
    payment = cut_off("someone@okbank")
    assert upi_unanswered_reconcile() == 1
    payment.refresh_from_db()
    assert (payment.status, payment.payer_vpa) == ("PROCESSING", "")
    assert _answers(payment)[0]["outcome"] == "no such request"
    # The customer can pay it now.
    assert upi_pay(payment_id=payment.pk, payer_vpa="failure@sandbox").status == "FAILED"


def test_requests_in_flight_or_answered_are_not_asked_about(cut_off, monkeypatch):
    asked = []
    monkeypatch.setattr(SandboxAcquirer, "upi_status", lambda self, **kw: asked.append(kw) or None)
    cut_off("success@sandbox", ago=timedelta(seconds=5))  # its call may still be running
    answered = cut_off("", ago=timedelta(0))
    upi_pay(payment_id=answered.pk, payer_vpa="timeout@sandbox")  # a call that recorded its answer
    Payment.objects.filter(pk=answered.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    assert upi_unanswered_reconcile() == 0 and asked == []


def test_an_unreachable_acquirer_is_asked_again_a_period_later_and_once_per_period(cut_off, monkeypatch):
    payment = cut_off("success@sandbox")

    def down(self, **kwargs):
        raise AcquirerUnavailable("status service down")

    monkeypatch.setattr(SandboxAcquirer, "upi_status", down)
    assert upi_unanswered_reconcile() == 1
    assert upi_unanswered_reconcile() == 0  # taken for this period: not asked again at once
    monkeypatch.undo()
    assert upi_unanswered_reconcile(now=timezone.now() + STATUS_QUERY_AFTER + timedelta(seconds=1)) == 1
    assert _answers(payment)[0]["outcome"] == "pending"


def test_the_sweep_reads_only_claimed_payments_through_their_index(cut_off):
    cut_off("success@sandbox")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    plan = upi_cut_off_requests(timezone.now())[:100].explain()
    assert "payment_upi_claimed" in plan and "Seq Scan on payments_payment" not in plan, plan


def test_each_payment_is_asked_about_by_its_own_acquirers_rule(s2s_merchant, settings):
    # The sandbox configured, Cashfree beside it: a Cashfree payment paid by its link (no claim
    # of ours) is asked about each period, since only Cashfree's lost notice would end it; the
    # sandbox's own unclaimed one is not (its UPI app answers). The configured acquirer's rule
    # used to decide for both.
    from payments.acquirer import _load
    from tests.support.factories import make_payment

    settings.GATEWAY_ACQUIRER, settings.GATEWAY_ACQUIRERS = "sandbox", ["sandbox", "cashfree"]
    settings.CASHFREE_CLIENT_ID, settings.CASHFREE_CLIENT_SECRET = "cf-test-id", "cf-test-secret"  # never called
    _load.cache_clear()
    old = timezone.now() - STATUS_QUERY_AFTER - timedelta(seconds=1)
    at_cashfree, at_sandbox = (make_payment(s2s_merchant.merchant, status=Payment.Status.PROCESSING)
                               for _ in range(2))
    Payment.objects.filter(pk=at_cashfree.pk).update(acquirer="cashfree", payment_mode=Payment.Mode.UPI,
                                                     payer_vpa="", updated_at=old)
    Payment.objects.filter(pk=at_sandbox.pk).update(acquirer="", payment_mode=Payment.Mode.UPI,
                                                    payer_vpa="", updated_at=old)
    assert list(upi_cut_off_requests(timezone.now()).values_list("pk", flat=True)) == [at_cashfree.pk]
    _load.cache_clear()
