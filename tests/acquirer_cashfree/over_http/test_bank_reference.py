"""One Cashfree payment or refund, one reference: the gateway stores the same `bank_reference`
whether Cashfree's status query or its webhook tells it first (issue 27). Both read Cashfree's
status through one function (payments.acquirer.cashfree.answers)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.acquirer.cashfree.client import Payment as CfPayment
from payments.models import Payment
from payments.services.upi import upi_pay, upi_unanswered_reconcile
from refunds.models import Refund
from refunds.services import refund_create, refund_submit
from tests.support.factories import make_payment

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status
LATER = timedelta(minutes=2)  # past the sweep's STATUS_QUERY_AFTER


def paying(shop) -> Payment:
    payment = make_payment(shop, amount=25000, status=S.PENDING)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="9876543210", customer_email="asha@example.in",
                                                 customer_name="Asha Rao")
    return upi_pay(payment_id=payment.pk, payer_vpa="asha@okbank")


def settled_by(cashfree, payment: Payment, first: str, **settle) -> dict:
    """Cashfree approves the payment; the gateway hears it `first` by webhook or by the sweep's
    status query, then by the other path (which changes nothing)."""
    entity = cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=first == "webhook", **settle)
    upi_unanswered_reconcile(now=timezone.now() + LATER)
    if first == "status query":
        cashfree.send_webhook(cashfree.payment_webhook(payment.sabpaisa_txn_id, entity))
    payment.refresh_from_db()
    assert payment.status == S.SUCCESS
    return entity


@pytest.mark.parametrize("first", ["webhook", "status query"])
def test_a_payment_without_a_bank_reference_stores_cashfrees_payment_id_whichever_path_is_first(
        shop, cashfree, first):
    payment = paying(shop)
    entity = settled_by(cashfree, payment, first, bank_reference="")
    assert payment.bank_rrn == str(entity["cf_payment_id"])


@pytest.mark.parametrize("first", ["webhook", "status query"])
def test_a_payment_stores_the_banks_reference_whichever_path_is_first(shop, cashfree, first):
    payment = paying(shop)
    settled_by(cashfree, payment, first, bank_reference="612345678901")
    assert payment.bank_rrn == "612345678901"


@pytest.mark.parametrize("arn", ["ARN0000777", ""])
@pytest.mark.parametrize("first", ["webhook", "submission"])
def test_a_refund_stores_the_same_reference_whichever_path_is_first(shop, cashfree, first, arn):
    payment = paying(shop)
    settled_by(cashfree, payment, "webhook")
    refund = refund_create(merchant=shop.merchant, payment=payment, amount=10000, refund_id="rf_ref_0001").refund
    refund_submit(refund_pk=refund.pk)  # Cashfree answers PENDING
    entity = cashfree.settle_refund(payment.sabpaisa_txn_id, "rf_ref_0001", "SUCCESS", notify=first == "webhook",
                                    arn=arn)
    refund_submit(refund_pk=refund.pk, now=timezone.now() + timedelta(hours=1))  # the pending sweep, later
    if first == "submission":
        cashfree.send_webhook(cashfree.refund_webhook(entity))
    refund.refresh_from_db()
    assert refund.status == Refund.Status.SUCCESS
    assert refund.bank_refund_reference == (arn or str(entity["cf_refund_id"]))


def test_the_newest_attempt_is_read_as_a_number_by_both_paths():
    from payments.acquirer.cashfree.answers import newest

    def attempt(cf_payment_id: str) -> CfPayment:
        return CfPayment(cf_payment_id=cf_payment_id, order_id="o", status="FAILED", amount=100, bank_reference="",
                         message="", payment_group="upi", error_code="",
                         raw={"payment_time": "2026-11-27T10:00:00+05:30"})

    assert newest([attempt("10"), attempt("9")]).cf_payment_id == "10"
