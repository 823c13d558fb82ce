"""Whole journeys through the gateway's own services with GATEWAY_ACQUIRER=cashfree, against
the stateful double (every answer of which is checked against Cashfree's description), with
Cashfree's webhooks delivered over HTTP to our endpoint on the live server, or lost."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.acquirer.cashfree.client import CashfreeClient, Customer, idempotency_key
from payments.cards import CardInput
from payments.models import AcquirerNotice, Payment, PaymentEvent, Reversal
from payments.services.cutoff import hosted_unanswered_reconcile
from payments.services.hosted import hosted_card_pay, hosted_card_verify_otp
from payments.services.reversals import reversal_submit
from payments.services.transitions import payment_expire
from payments.services.upi import upi_pay, upi_unanswered_reconcile
from refunds.models import Refund
from refunds.services import refund_create, refund_submit
from tests.acquirer_cashfree.double import CLIENT_SECRET
from tests.support.factories import make_payment
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status
CARD = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2030, cvv="123")


def session(shop, amount=25000) -> Payment:
    """A hosted payment, PENDING, from a customer Cashfree can take (a 10-digit phone)."""
    payment = make_payment(shop, amount=amount, status=S.PENDING)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="+91 98765 43210", customer_email="asha@example.in",
                                                 customer_name="Asha Rao")
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


def merchant_events(payment) -> list[str]:
    return list(WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id).values_list("event_type", flat=True))


def test_upi_pay_succeeds_by_cashfree_s_webhook(shop, cashfree):
    payment = upi_pay(payment_id=session(shop).pk, payer_vpa="asha@okbank")
    assert payment.status == S.PROCESSING
    [collect] = cashfree.orders[payment.sabpaisa_txn_id]["_payments"]
    assert cashfree.payments[collect]["payment_group"] == "upi"

    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", bank_reference="623456789012")
    assert cashfree.deliveries[-1].status == 200
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "623456789012")
    assert merchant_events(payment) == ["payment.success"]


def test_upi_pay_declined_fails_the_attempt_and_the_customer_may_choose_again(shop, cashfree):
    payment = upi_pay(payment_id=session(shop).pk, payer_vpa="asha@okbank")
    cashfree.settle_payment(payment.sabpaisa_txn_id, "FAILED", message="declined by the payer")
    payment.refresh_from_db()
    assert (payment.status, payment.attempt_error) == (S.PENDING, "declined by the payer")
    # The next method is a new payment attempt on the same Cashfree order, and it can succeed.
    payment = upi_pay(payment_id=payment.pk, payer_vpa="asha@okbank")
    assert len(cashfree.orders[payment.sabpaisa_txn_id]["_payments"]) == 2
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS")
    assert Payment.objects.get(pk=payment.pk).status == S.SUCCESS


def test_a_card_is_confirmed_by_the_status_query_and_its_late_webhook_changes_nothing(shop, cashfree):
    payment = hosted_card_pay(payment=session(shop), card=CARD)
    assert payment.status == S.PROCESSING and payment.card_challenge_ref  # Cashfree's 3-D Secure page
    sent = [call.body for call in cashfree.calls if call.path.endswith("/orders/sessions")]
    assert sent[0]["payment_method"]["card"]["card_number"] == CARD.number  # in that one request only
    assert CARD.number not in json.dumps(list(PaymentEvent.objects.filter(payment=payment).values("detail")))

    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False, bank_reference="634567890123")
    payment = hosted_card_verify_otp(payment=payment, otp="")  # back from the issuer's page
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "634567890123")

    late = cashfree.send_webhook(cashfree.payment_webhook(payment.sabpaisa_txn_id,
                                                          cashfree.newest_payment(payment.sabpaisa_txn_id)))
    assert late.status == 200
    assert Payment.objects.get(pk=payment.pk).bank_rrn == "634567890123"
    assert merchant_events(payment) == ["payment.success"]
    assert not Reversal.objects.filter(payment=payment).exists()


def test_a_refund_is_finalised_by_its_webhook(shop, cashfree):
    payment = upi_pay(payment_id=session(shop).pk, payer_vpa="asha@okbank")
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS")
    payment.refresh_from_db()
    refund = refund_create(merchant=shop.merchant, payment=payment, amount=10000, refund_id="rf_flow_0001").refund
    refund_submit(refund_pk=refund.pk)  # what the task does: Cashfree answers PENDING
    assert Refund.objects.get(pk=refund.pk).status == Refund.Status.INITIATED
    assert cashfree.refunds[(payment.sabpaisa_txn_id, "rf_flow_0001")]["refund_status"] == "PENDING"

    cashfree.settle_refund(payment.sabpaisa_txn_id, "rf_flow_0001", "SUCCESS")
    refund.refresh_from_db()
    assert refund.status == Refund.Status.SUCCESS
    assert WebhookEvent.objects.filter(subject_id="rf_flow_0001").count() == 1


def test_a_refund_whose_webhook_is_lost_is_finalised_by_the_next_submission(shop, cashfree):
    payment = upi_pay(payment_id=session(shop).pk, payer_vpa="asha@okbank")
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS")
    refund = refund_create(merchant=shop.merchant, payment=Payment.objects.get(pk=payment.pk), amount=25000,
                           refund_id="rf_flow_0002").refund
    refund_submit(refund_pk=refund.pk)
    cashfree.settle_refund(payment.sabpaisa_txn_id, "rf_flow_0002", "SUCCESS", notify=False)
    refund_submit(refund_pk=refund.pk, now=timezone.now() + timedelta(hours=1))  # the pending sweep, later
    assert Refund.objects.get(pk=refund.pk).status == Refund.Status.SUCCESS


def test_a_success_webhook_after_the_payment_expired_is_reversed_at_cashfree(shop, cashfree):
    payment = upi_pay(payment_id=session(shop).pk, payer_vpa="asha@okbank")
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    payment_expire(payment_id=payment.pk)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", bank_reference="645678901234")
    assert Payment.objects.get(pk=payment.pk).status == S.EXPIRED
    reversal = Reversal.objects.get(payment=payment, bank_rrn="645678901234")
    reversal_submit(reversal_pk=reversal.pk)
    # Given back as a refund of the whole approval, under the reversal's own id.
    [(order_id, refund_id)] = cashfree.refunds
    assert order_id == payment.sabpaisa_txn_id and refund_id == f"rev_{reversal.pk}"
    assert cashfree.refunds[(order_id, refund_id)]["refund_amount"] == 250.0


def test_a_cut_off_upi_request_whose_webhook_was_lost_is_settled_by_the_sweep(shop, cashfree):
    payment = session(shop)
    # The pay request reached Cashfree, then the process died before recording its answer:
    # the payer's claim is committed, no answer is, and Cashfree's webhook is lost.
    Payment.objects.filter(pk=payment.pk).update(status=S.PROCESSING, payment_mode=Payment.Mode.UPI,
                                                 payer_vpa="asha@okbank", attempt=1)
    client = CashfreeClient(base_url=cashfree.base_url, client_id=cashfree.client_id, client_secret=CLIENT_SECRET)
    order = client.create_order(order_id=payment.sabpaisa_txn_id, amount=payment.amount,
                                customer=Customer("cust_0001", "9876543210"),
                                idempotency_key=idempotency_key(payment.sabpaisa_txn_id, "cut-off order"))
    client.pay_upi_collect(payment_session_id=order.payment_session_id, vpa="asha@okbank",
                           idempotency_key=idempotency_key(payment.sabpaisa_txn_id, "cut-off pay"))
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False, bank_reference="656789012345")

    assert upi_unanswered_reconcile(now=timezone.now() + timedelta(minutes=2)) == 1
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "656789012345")
    assert not AcquirerNotice.objects.exists()  # no webhook ever came


def test_a_cut_off_card_check_whose_webhook_was_lost_is_settled_by_the_sweep(shop, cashfree):
    payment = hosted_card_pay(payment=session(shop), card=CARD)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False, bank_reference="667890123456")
    # The customer came back and the check was claimed, then the process died mid-call.
    Payment.objects.filter(pk=payment.pk).update(acquirer_call_started_at=timezone.now() - timedelta(minutes=2))

    assert hosted_unanswered_reconcile() == 1
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn, payment.acquirer_call_started_at) == (S.SUCCESS, "667890123456", None)


def test_cashfree_says_its_pending_answers_need_asking():
    from payments.acquirer.cashfree.acquirer import CashfreeAcquirer

    assert CashfreeAcquirer.status_query_while_pending is True


def test_an_answered_upi_request_whose_webhook_was_lost_is_settled_by_the_sweep(shop, cashfree):
    # upi_pay was answered (PENDING: the collect request went out); the payer approved in the
    # app, and Cashfree's webhook never arrived. Without the sweep the payment would expire
    # although the customer paid.
    payment = upi_pay(payment_id=session(shop).pk, payer_vpa="asha@okbank")
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False, bank_reference="678901234567")
    assert upi_unanswered_reconcile() == 0  # not before STATUS_QUERY_AFTER
    assert upi_unanswered_reconcile(now=timezone.now() + timedelta(minutes=2)) == 1
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "678901234567")


def test_an_answered_upi_request_still_pending_is_asked_again_each_period(shop, cashfree):
    payment = upi_pay(payment_id=session(shop).pk, payer_vpa="asha@okbank")
    Payment.objects.filter(pk=payment.pk).update(updated_at=timezone.now() - timedelta(minutes=2))
    assert upi_unanswered_reconcile() == 1
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING  # Cashfree: still PENDING
    assert upi_unanswered_reconcile() == 0  # taken for this period
    assert upi_unanswered_reconcile(now=timezone.now() + timedelta(minutes=2)) == 1
    cashfree.settle_payment(payment.sabpaisa_txn_id, "FAILED", notify=False, message="expired in the app")
    assert upi_unanswered_reconcile(now=timezone.now() + timedelta(minutes=4)) == 1
    payment.refresh_from_db()
    assert (payment.status, payment.attempt_error) == (S.PENDING, "expired in the app")
