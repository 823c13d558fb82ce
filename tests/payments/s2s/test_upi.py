"""payments.services.upi: paying a payment's UPI link from a VPA, as a UPI app does."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.core.errors import ValidationError
from payments.models import Payment, PaymentEvent
from payments.services.expiry import payments_expire_due
from payments.services.transitions import payment_expire
from payments.services.upi import (
    upi_link,
    upi_pay,
    upi_pay_link,
)
from payments.sandbox_upi.approvals import upi_sandbox_approvals_due, upi_sandbox_approve
from payments.tasks import payments_expire_sweep
from tests.support.factories import signed_body
from webhooks.models import WebhookEvent


@pytest.fixture
def s2s_payment(s2s_merchant, post):
    def make(**overrides) -> Payment:
        overrides.setdefault("udf1", "order-42")
        response = post(s2s_merchant, signed_body(s2s_merchant, **overrides))
        assert response.status_code == 201, response.json()
        return Payment.objects.get(payment_id=response.json()["paymentId"])

    return make


def expect_error(field: str, fn, **kwargs) -> str:
    with pytest.raises(ValidationError) as caught:
        fn(**kwargs)
    assert caught.value.field == field, caught.value.message
    return caught.value.message


def test_failure_vpa_fails_the_payment_at_once_and_records_the_s2s_webhook(s2s_payment):
    payment = s2s_payment()
    result = upi_pay_link(upi_uri=upi_link(payment), payer_vpa="failure@sandbox")
    assert (result.status, result.payer_vpa) == ("FAILED", "failure@sandbox")
    assert result.failure_reason
    event = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id)
    assert event.event_type == "payment.failed"
    assert event.payload["paymentId"] == payment.payment_id
    assert event.payload["status"] == "FAILED"
    assert event.payload["paymentMode"] == "UPI_QR"
    assert event.payload["udf1"] == "order-42"


def test_success_vpa_leaves_it_processing_until_the_banks_approval(s2s_payment):
    payment = s2s_payment()
    paid = upi_pay(payment_id=payment.pk, payer_vpa=" Success@Sandbox ")
    assert (paid.status, paid.payer_vpa) == ("PROCESSING", "success@sandbox")
    approved = upi_sandbox_approve(payment_id=payment.pk)
    assert approved.status == "SUCCESS"
    assert len(approved.bank_rrn) == 12 and approved.bank_rrn.isdigit()
    assert approved.paid_amount == approved.amount
    event = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id)
    assert (event.event_type, event.payload["status"], event.payload["bankRrn"]) == (
        "payment.success", "SUCCESS", approved.bank_rrn)
    # A second approval (a redelivered task, or the sweep) changes nothing.
    assert upi_sandbox_approve(payment_id=payment.pk) is None
    assert WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id).count() == 1


def test_timeout_vpa_brings_the_deadline_forward_to_the_sandbox_timeout(s2s_payment, settings):
    settings.SANDBOX_UPI_TIMEOUT_SECONDS = 60
    payment = s2s_payment(upiExpiryMinutes=10)
    before = timezone.now()
    paid = upi_pay(payment_id=payment.pk, payer_vpa="timeout@sandbox")
    assert paid.status == "PROCESSING"
    assert before + timedelta(seconds=60) <= paid.expires_at <= timezone.now() + timedelta(seconds=60)


def test_timeout_vpa_never_pushes_the_deadline_later(s2s_payment, settings):
    settings.SANDBOX_UPI_TIMEOUT_SECONDS = 900
    payment = s2s_payment(upiExpiryMinutes=2)
    paid = upi_pay(payment_id=payment.pk, payer_vpa="timeout@sandbox")
    assert paid.expires_at == payment.expires_at


def test_an_unknown_vpa_is_refused_and_changes_nothing(s2s_payment):
    payment = s2s_payment()
    assert "not a sandbox test VPA" in expect_error("payerVpa", upi_pay, payment_id=payment.pk,
                                                    payer_vpa="someone@okbank")
    expect_error("payerVpa", upi_pay, payment_id=payment.pk, payer_vpa="not a vpa")
    expect_error("payerVpa", upi_pay, payment_id=payment.pk, payer_vpa=None)
    payment.refresh_from_db()
    assert (payment.status, payment.payer_vpa) == ("PROCESSING", "")


def test_a_final_payment_cannot_be_paid_again(s2s_payment):
    payment = s2s_payment()
    upi_pay(payment_id=payment.pk, payer_vpa="failure@sandbox")
    assert "already FAILED" in expect_error("upiUri", upi_pay, payment_id=payment.pk, payer_vpa="success@sandbox")


def test_a_payment_past_its_deadline_is_refused_and_expired_on_the_spot(s2s_payment):
    payment = s2s_payment()
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert "expired" in expect_error("upiUri", upi_pay, payment_id=payment.pk, payer_vpa="success@sandbox")
    payment.refresh_from_db()
    assert payment.status == "EXPIRED"
    assert WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id).event_type == "payment.expired"


def test_a_payment_has_one_payer(s2s_payment):
    payment = s2s_payment()
    upi_pay(payment_id=payment.pk, payer_vpa="timeout@sandbox")
    assert "already paying" in expect_error("upiUri", upi_pay, payment_id=payment.pk, payer_vpa="success@sandbox")
    payment.refresh_from_db()
    assert payment.payer_vpa == "timeout@sandbox"


def test_a_pending_hosted_payment_moves_to_processing_with_mode_upi(s2s_merchant):
    payment = Payment.objects.create(merchant=s2s_merchant.merchant, flow="HOSTED", merchant_txn_id="H-1",
                                     amount=2500, status="PENDING",
                                     expires_at=timezone.now() + timedelta(minutes=30))
    paid = upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox")
    assert (paid.status, paid.payment_mode, paid.payer_vpa) == ("PROCESSING", "UPI", "success@sandbox")


def test_a_processing_payment_of_another_method_is_refused(s2s_merchant):
    payment = Payment.objects.create(merchant=s2s_merchant.merchant, flow="HOSTED", merchant_txn_id="H-2",
                                     amount=2500, status="PROCESSING", payment_mode="CARD",
                                     expires_at=timezone.now() + timedelta(minutes=30))
    expect_error("upiUri", upi_pay, payment_id=payment.pk, payer_vpa="success@sandbox")


# --- reading the link ------------------------------------------------------------------------

@pytest.mark.parametrize(("mangle", "message"), [
    (lambda link: link.replace("pa=gateway%40sandbox", "pa=thief@okbank").replace("pa=gateway@sandbox",
                                                                                   "pa=thief@okbank"),
     "not this gateway's VPA"),
    (lambda link: link.replace("am=123.45", "am=1.00"), "does not match"),
    (lambda link: link.replace("am=123.45", "am=lots"), "not a number"),
    (lambda link: link.replace("am=123.45", "am=NaN"), "does not match"),
    (lambda link: link.replace("cu=INR", "cu=USD"), "INR"),
    (lambda link: link.replace("tr=SP", "tr=XX"), "names no payment"),
    (lambda link: link.replace("upi://pay", "https://pay"), "upi://pay"),
    (lambda link: link.replace("upi://pay", "upi://mandate"), "upi://pay"),
    (lambda link: link + "&am=123.45", "twice"),
    (lambda link: link.replace("&cu=INR", ""), "no cu"),
    (lambda link: "", "upi://pay"),
])
def test_a_link_a_upi_app_would_refuse_is_refused(s2s_payment, mangle, message):
    payment = s2s_payment()
    link = mangle(upi_link(payment))
    assert message in expect_error("upiUri", upi_pay_link, upi_uri=link, payer_vpa="success@sandbox")
    payment.refresh_from_db()
    assert payment.payer_vpa == ""


def test_am_written_without_decimals_is_the_same_amount(s2s_payment):
    payment = s2s_payment(amount=10000)
    link = upi_link(payment).replace("am=100.00", "am=100")
    assert upi_pay_link(upi_uri=link, payer_vpa="failure@sandbox").status == "FAILED"


# --- the safety net ----------------------------------------------------------------------------

def test_the_sweep_finishes_an_approval_whose_task_was_lost(s2s_payment, settings):
    settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS = 1
    waiting = s2s_payment()
    declined = s2s_payment()
    untouched = s2s_payment()
    upi_pay(payment_id=waiting.pk, payer_vpa="success@sandbox")
    upi_pay(payment_id=declined.pk, payer_vpa="failure@sandbox")
    assert upi_sandbox_approvals_due() == 0  # not due yet: the task has a second and more to run
    later = timezone.now() + timedelta(seconds=5)
    assert upi_sandbox_approvals_due(now=later) == 1
    statuses = dict(Payment.objects.values_list("pk", "status"))
    assert (statuses[waiting.pk], statuses[declined.pk], statuses[untouched.pk]) == ("SUCCESS", "FAILED", "PROCESSING")


def test_the_beat_sweep_approves_before_it_expires(s2s_payment, settings):
    settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS = 0
    payment = s2s_payment()
    upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox")
    # The approval task was lost and the deadline has passed by the time the sweep runs.
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now())
    from payments.models import PaymentEvent

    PaymentEvent.objects.filter(payment=payment).update(created_at=timezone.now() - timedelta(seconds=5))
    payments_expire_sweep()
    payment.refresh_from_db()
    assert payment.status == "SUCCESS"


@pytest.mark.parametrize(("raised", "code"), [("AcquirerUnavailable", "SERVICE_UNAVAILABLE"),
                                              ("AcquirerRefused", "PAYMENT_FAILED"),
                                              ("AcquirerError", "PROCESSING_ERROR")])
def test_an_acquirer_that_cannot_take_the_payment_releases_the_payer(s2s_payment, monkeypatch, raised, code):
    from gateway.core.errors import GatewayError
    from payments.acquirer import base
    from payments.acquirer.sandbox.acquirer import SandboxAcquirer

    payment = s2s_payment()

    def down(self, *, payment, payer_vpa, return_url=""):
        raise getattr(base, raised)("injected fault")

    with monkeypatch.context() as patched:
        patched.setattr(SandboxAcquirer, "upi_pay", down)
        with pytest.raises(GatewayError) as caught:
            upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox")
    assert caught.value.code == code
    payment.refresh_from_db()
    assert (payment.status, payment.payer_vpa) == ("PROCESSING", "")
    # The acquirer is back: the customer pays.
    assert upi_pay(payment_id=payment.pk, payer_vpa="failure@sandbox").status == "FAILED"


# --- an approval racing the deadline -------------------------------------------------------------

def test_a_payment_approved_just_before_its_deadline_succeeds_instead_of_expiring(s2s_payment, settings):
    settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS = 5
    payment = s2s_payment()
    # The customer approves 3 s before the link expires; the bank's approval lands 5 s later.
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() + timedelta(seconds=3))
    paid_at = timezone.now()
    paid = upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox")
    assert paid.status == "PROCESSING" and paid.expires_at > paid_at + timedelta(seconds=5)
    # The expiry task queued for the old deadline fires first, and finds the deadline moved.
    assert payment_expire(payment_id=payment.pk, now=paid_at + timedelta(seconds=4)) is None
    assert payments_expire_due(now=paid_at + timedelta(seconds=5)) == 0
    approved = upi_sandbox_approve(payment_id=payment.pk)
    assert approved.status == "SUCCESS" and approved.bank_rrn


def test_an_approval_that_finds_the_payment_expired_is_kept_with_its_rrn_for_reversal(s2s_payment, caplog):
    payment = s2s_payment()
    upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox")
    # The worker and the beat were both down past the deadline, then the expiry ran first.
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now())
    assert payment_expire(payment_id=payment.pk) is not None
    assert upi_sandbox_approve(payment_id=payment.pk) is None
    payment.refresh_from_db()
    assert payment.status == "EXPIRED" and not payment.bank_rrn
    [event] = payment.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__outcome="approved")
    rrn = event.detail["reference"]
    assert len(rrn) == 12 and event.detail["status"] == "EXPIRED" and "needs reversal" in event.detail["result"]
    assert any(record.levelname == "ERROR" and "needs reversal" in record.getMessage() and rrn in record.getMessage()
               for record in caplog.records)


def test_an_approval_delivered_twice_is_not_mistaken_for_money_to_reverse(s2s_payment, caplog):
    payment = s2s_payment()
    upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox")
    assert upi_sandbox_approve(payment_id=payment.pk).status == "SUCCESS"
    assert upi_sandbox_approve(payment_id=payment.pk) is None  # the task's message delivered again
    assert not [record for record in caplog.records if record.levelname == "ERROR"]
    assert not payment.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__outcome="approved").exists()


def test_the_payers_answer_is_kept_in_the_payments_story(s2s_payment):
    payment = s2s_payment()
    upi_pay(payment_id=payment.pk, payer_vpa="timeout@sandbox")
    event = payment.events.get(kind=PaymentEvent.Kind.ACQUIRER, detail__step="upi_pay")
    assert (event.detail["outcome"], event.detail["result"], event.detail["reference"]) == (
        "pending", "awaiting approval", "")
