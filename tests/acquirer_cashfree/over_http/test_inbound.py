"""POST /acquirer/cashfree/webhooks: Cashfree's webhooks, sent by the stateful double over real
HTTP to the live server, verified, recorded untrusted and applied through the payments' and
refunds' own transitions, once."""
from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.acquirer.cashfree.acquirer import cashfree_refund_id
from payments.acquirer.cashfree.client import CashfreeClient, Customer, idempotency_key
from payments.models import AcquirerNotice, Payment, PaymentEvent, Reversal
from payments.services.transitions import payment_expire
from refunds.models import Refund
from tests.acquirer_cashfree.double import CLIENT_SECRET
from tests.support.factories import make_payment, make_refund
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status
N = AcquirerNotice.Status
CUSTOMER = Customer(customer_id="cust_0001", phone="9876543210")


@pytest.fixture
def client(cashfree):
    return CashfreeClient(base_url=cashfree.base_url, client_id=cashfree.client_id, client_secret=CLIENT_SECRET,
                          timeout=5)


def paying(shop, client, *, mode=Payment.Mode.UPI, attempts=1, amount=25000, **fields) -> Payment:
    """A hosted payment PROCESSING in `mode`, with its Cashfree order (id: its sabpaisaTxnId)
    and `attempts` payment attempts at Cashfree, the newest one the payment's current one."""
    if mode == Payment.Mode.UPI:
        fields.setdefault("payer_vpa", "asha@okbank")
    payment = make_payment(shop, amount=amount, status=S.PROCESSING, payment_mode=mode, **fields)
    order = client.create_order(order_id=payment.sabpaisa_txn_id, amount=amount, customer=CUSTOMER,
                                idempotency_key=idempotency_key(payment.sabpaisa_txn_id, "order"))
    for attempt in range(attempts):
        client.pay_upi_collect(payment_session_id=order.payment_session_id, vpa="asha@okbank",
                               idempotency_key=idempotency_key(payment.sabpaisa_txn_id, "pay", str(attempt)))
    return payment


def test_a_success_webhook_makes_the_payment_succeed_with_the_bank_reference(shop, client, cashfree):
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", bank_reference="612345678901")
    [delivery] = cashfree.deliveries
    assert delivery.status == 200 and delivery.answer["status"] == "APPLIED"
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn, payment.paid_amount) == (S.SUCCESS, "612345678901", 25000)
    notice = AcquirerNotice.objects.get()
    assert (notice.status, notice.payment_id, notice.order_id) == (N.APPLIED, payment.pk, payment.sabpaisa_txn_id)
    assert notice.raw_body.encode() == delivery.body  # recorded as received, the signed bytes
    assert PaymentEvent.objects.filter(payment=payment, kind="acquirer", detail__step="cashfree_webhook",
                                       detail__outcome="approved").count() == 1
    assert WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id).count() == 1  # payment.success


def test_the_same_webhook_again_changes_nothing(shop, client, cashfree):
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS")
    first = cashfree.deliveries[0]
    events = PaymentEvent.objects.filter(payment=payment).count()
    # Replayed within the window: the same bytes, freshly signed (Cashfree's retry) and as captured.
    again = cashfree.send_webhook(json.loads(first.body), body=first.body)
    replayed = cashfree.send_webhook(json.loads(first.body), body=first.body,
                                     timestamp=first.headers["x-webhook-timestamp"])
    for delivery in (again, replayed):
        assert delivery.status == 200 and delivery.answer["duplicate"] is True
    assert PaymentEvent.objects.filter(payment=payment).count() == events
    assert WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id).count() == 1
    notice = AcquirerNotice.objects.get()
    assert (notice.deliveries, notice.status) == (3, N.APPLIED)


def test_a_forged_webhook_is_refused_and_not_recorded(shop, client, cashfree):
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False)
    payload = cashfree.payment_webhook(payment.sabpaisa_txn_id, cashfree.newest_payment(payment.sabpaisa_txn_id))
    forged = cashfree.send_webhook(payload, secret="not-the-secret")
    assert forged.status == 401
    assert forged.answer["errorCode"] == "UNAUTHORIZED" and forged.answer["success"] is False
    assert "signature" in forged.answer["errorMessage"]
    assert not AcquirerNotice.objects.exists()
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING


def status_queries(cashfree) -> int:
    return sum(1 for call in cashfree.calls if call.method == "GET" and call.path.endswith("/payments"))


def late(seconds=301) -> str:
    return str(int((time.time() - seconds) * 1000))


def test_a_late_genuine_success_is_applied_once_the_status_query_confirms_it(shop, client, cashfree):
    # Cashfree retries a delivery we did not take with its first timestamp: more than five
    # minutes later it used to be refused as stale (400), and the payment waited for the sweep.
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", bank_reference="612345678901", notify=False)
    payload = cashfree.payment_webhook(payment.sabpaisa_txn_id, cashfree.newest_payment(payment.sabpaisa_txn_id))
    queries = status_queries(cashfree)
    delivery = cashfree.send_webhook(payload, timestamp=late(3600))
    assert delivery.status == 200 and delivery.answer["status"] == "APPLIED"
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "612345678901")
    notice = AcquirerNotice.objects.get()
    assert (notice.status, notice.payment_id) == (N.APPLIED, payment.pk)
    assert notice.sent_at < timezone.now() - timedelta(minutes=59)  # recorded with Cashfree's own time
    assert status_queries(cashfree) == queries + 1  # believed because Cashfree's status query said so


def test_a_late_success_the_status_query_does_not_confirm_changes_nothing(shop, client, cashfree):
    # A captured delivery replayed later carries a good signature too: it is news only if the
    # status query says so. Here Cashfree's attempt is still pending.
    payment = paying(shop, client)
    attempt = cashfree.newest_payment(payment.sabpaisa_txn_id)
    payload = cashfree.payment_webhook(payment.sabpaisa_txn_id, {**attempt, "payment_status": "SUCCESS",
                                                                 "bank_reference": "699999999999"})
    delivery = cashfree.send_webhook(payload, timestamp=late())
    assert delivery.status == 200 and delivery.answer["status"] == "IGNORED"
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING
    assert "late" in AcquirerNotice.objects.get().result


def test_a_late_webhook_with_a_wrong_signature_is_still_refused(shop, client, cashfree):
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False)
    payload = cashfree.payment_webhook(payment.sabpaisa_txn_id, cashfree.newest_payment(payment.sabpaisa_txn_id))
    forged = cashfree.send_webhook(payload, timestamp=late(), secret="not-the-secret")
    assert (forged.status, forged.answer["errorCode"]) == (401, "UNAUTHORIZED")
    assert not AcquirerNotice.objects.exists()
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING


def test_a_webhook_from_the_future_is_refused_even_when_genuinely_signed(shop, client, cashfree):
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False)
    payload = cashfree.payment_webhook(payment.sabpaisa_txn_id, cashfree.newest_payment(payment.sabpaisa_txn_id))
    ahead = cashfree.send_webhook(payload, timestamp=late(-120))
    assert (ahead.status, ahead.answer["errorCode"]) == (400, "REQUEST_EXPIRED")
    assert not AcquirerNotice.objects.exists()
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING


def test_a_signed_body_that_is_not_json_is_refused(cashfree):
    answer = cashfree.send_webhook({"type": "PAYMENT_SUCCESS_WEBHOOK"}, body=b"not json")
    assert (answer.status, answer.answer["errorCode"]) == (400, "VALIDATION_ERROR")


def test_only_post_and_only_where_cashfree_is_the_acquirer(cashfree, live_server, settings, client):
    import http.client

    connection = http.client.HTTPConnection(live_server.thread.host, live_server.thread.port, timeout=10)
    connection.request("GET", "/acquirer/cashfree/webhooks")
    response = connection.getresponse()
    assert (response.status, json.loads(response.read())["errorCode"]) == (405, "METHOD_NOT_ALLOWED")
    settings.GATEWAY_ACQUIRER = "sandbox"
    delivery = cashfree.send_webhook({"type": "PAYMENT_SUCCESS_WEBHOOK", "data": {}})
    assert (delivery.status, delivery.answer["errorCode"]) == (404, "NOT_FOUND")


def test_a_success_for_another_amount_is_recorded_and_not_applied(shop, client, cashfree):
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False)
    paid = cashfree.newest_payment(payment.sabpaisa_txn_id)
    payload = cashfree.payment_webhook(payment.sabpaisa_txn_id, {**paid, "payment_amount": 1.0})
    delivery = cashfree.send_webhook(payload)
    assert delivery.status == 200 and delivery.answer["status"] == "IGNORED"
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING
    assert "amount" in AcquirerNotice.objects.get().result


def test_a_webhook_for_an_order_of_nobody_is_acknowledged_and_ignored(shop, client, cashfree):
    order = client.create_order(order_id="NOT_OURS_0001", amount=100, customer=CUSTOMER,
                                idempotency_key=idempotency_key("NOT_OURS_0001"))
    client.pay_upi_qr(payment_session_id=order.payment_session_id, idempotency_key=idempotency_key("n", "1"))
    cashfree.settle_payment("NOT_OURS_0001", "SUCCESS")
    assert cashfree.deliveries[0].status == 200
    assert AcquirerNotice.objects.get().status == N.IGNORED


def test_a_failure_confirmed_by_the_status_query_fails_the_attempt(shop, client, cashfree):
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "FAILED", message="insufficient funds")
    assert cashfree.deliveries[0].answer["status"] == "APPLIED"
    payment.refresh_from_db()
    # Hosted: the attempt failed and the methods are offered again.
    assert (payment.status, payment.failed_attempts, payment.attempt_error) == (S.PENDING, 1, "insufficient funds")
    assert any(call.path.endswith(f"/orders/{payment.sabpaisa_txn_id}/payments") for call in cashfree.calls)


def test_a_failure_of_an_earlier_attempt_leaves_the_newer_one_alone(shop, client, cashfree):
    payment = paying(shop, client, attempts=2)
    order = cashfree.orders[payment.sabpaisa_txn_id]
    earlier = dict(cashfree.payments[order["_payments"][0]], payment_status="FAILED")
    cashfree.payments[earlier["cf_payment_id"]] = earlier
    delivery = cashfree.send_webhook(cashfree.payment_webhook(payment.sabpaisa_txn_id, earlier))
    assert delivery.status == 200 and delivery.answer["status"] == "IGNORED"
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING


def test_a_failure_that_cannot_be_confirmed_is_kept_and_applied_when_delivered_again(shop, client, cashfree):
    payment = paying(shop, client)
    cashfree.unavailable = True
    cashfree.settle_payment(payment.sabpaisa_txn_id, "FAILED")
    first = cashfree.deliveries[0]
    assert (first.status, first.answer["errorCode"]) == (503, "SERVICE_UNAVAILABLE")
    assert AcquirerNotice.objects.get().status == N.RECEIVED
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING
    cashfree.unavailable = False
    again = cashfree.send_webhook(json.loads(first.body), body=first.body)  # Cashfree's retry
    assert again.status == 200 and again.answer["status"] == "APPLIED"
    assert Payment.objects.get(pk=payment.pk).status == S.PENDING


def test_a_pending_webhook_is_not_final(shop, client, cashfree):
    payment = paying(shop, client)
    pending = cashfree.newest_payment(payment.sabpaisa_txn_id)
    delivery = cashfree.send_webhook(cashfree.payment_webhook(payment.sabpaisa_txn_id, pending))
    assert delivery.answer["status"] == "IGNORED"
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING


def test_a_success_after_the_payment_expired_is_reversed(shop, client, cashfree):
    payment = paying(shop, client)
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    payment_expire(payment_id=payment.pk)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", bank_reference="699999999999")
    assert cashfree.deliveries[0].status == 200
    assert Payment.objects.get(pk=payment.pk).status == S.EXPIRED
    reversal = Reversal.objects.get(payment=payment)
    assert (reversal.bank_rrn, reversal.amount) == ("699999999999", 25000)


def test_the_refund_notice_of_a_reversal_is_recognised_as_the_reversals(shop, client, cashfree):
    from payments.services.reversals import reversal_submit

    payment = paying(shop, client)
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    payment_expire(payment_id=payment.pk)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", bank_reference="698888888888")
    reversal = Reversal.objects.get(payment=payment)
    reversal_submit(reversal_pk=reversal.pk)  # Cashfree's refund is PENDING: sent again later
    cashfree.settle_refund(payment.sabpaisa_txn_id, f"rev_{reversal.pk}", "SUCCESS")
    notice = AcquirerNotice.objects.latest("pk")
    assert notice.status == N.IGNORED
    assert notice.result.startswith(f"the refund of reversal {reversal.pk} (approval 698888888888 at cashfree"), \
        notice.result


# -- refunds -------------------------------------------------------------------------------------

def refunding(shop, client, cashfree, amount=10000, refund_id="rf_cf_0001") -> Refund:
    payment = paying(shop, client)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS")
    payment.refresh_from_db()
    assert payment.status == S.SUCCESS
    refund = make_refund(payment, amount=amount, currency="INR",
                         status=Refund.Status.INITIATED, refund_id=refund_id)
    client.create_refund(order_id=payment.sabpaisa_txn_id, refund_id=cashfree_refund_id(refund_id), amount=amount,
                         idempotency_key=idempotency_key(refund_id))
    return refund


def test_a_refund_success_webhook_finalises_the_refund_once(shop, client, cashfree):
    refund = refunding(shop, client, cashfree)
    cashfree.settle_refund(refund.payment.sabpaisa_txn_id, refund.refund_id, "SUCCESS")
    delivery = cashfree.deliveries[-1]
    assert delivery.status == 200 and delivery.answer["status"] == "APPLIED"
    refund.refresh_from_db()
    assert refund.status == Refund.Status.SUCCESS and refund.bank_refund_reference.startswith("ARN")
    assert WebhookEvent.objects.filter(subject_id=refund.refund_id).count() == 1  # refund.processed
    # Delivered again with another body (Cashfree's event_time moves): applied again, no change.
    again = cashfree.send_webhook({**json.loads(delivery.body), "event_time": "2026-01-01T10:00:00+05:30"})
    assert again.status == 200 and again.answer["duplicate"] is False
    assert WebhookEvent.objects.filter(subject_id=refund.refund_id).count() == 1
    assert Refund.objects.get(pk=refund.pk).status == Refund.Status.SUCCESS


def test_a_cancelled_refund_fails(shop, client, cashfree):
    refund = refunding(shop, client, cashfree)
    cashfree.settle_refund(refund.payment.sabpaisa_txn_id, refund.refund_id, "CANCELLED")
    refund.refresh_from_db()
    assert (refund.status, refund.failure_reason) == (Refund.Status.FAILED, "Refund cancelled by the bank")


def test_a_notice_whose_application_broke_is_answered_503_and_applied_on_the_next_delivery(
        shop, client, cashfree, monkeypatch):
    from payments.services import notices

    payment = paying(shop, client)

    def broken(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(notices, "step_answer_apply", broken)
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS")
    first = cashfree.deliveries[0]
    assert (first.status, first.answer["errorCode"]) == (503, "SERVICE_UNAVAILABLE")  # never a 500
    notice = AcquirerNotice.objects.get()
    assert (notice.status, notice.result) == (N.RECEIVED, "not applied: RuntimeError")
    monkeypatch.undo()
    again = cashfree.send_webhook(json.loads(first.body), body=first.body)
    assert again.status == 200 and again.answer["status"] == "APPLIED"
    assert Payment.objects.get(pk=payment.pk).status == S.SUCCESS


def test_a_delivery_arriving_while_the_first_is_applied_does_not_apply_it_twice(shop, client, cashfree,
                                                                                monkeypatch):
    from gateway.inbound import pipeline
    from payments.services.notices import RETAKE_AFTER

    payment = paying(shop, client)
    monkeypatch.setattr(pipeline, "_apply", lambda acquirer, record, notice, **_: None)  # the first, still applying
    cashfree.settle_payment(payment.sabpaisa_txn_id, "SUCCESS")
    first = cashfree.deliveries[0]
    monkeypatch.undo()
    during = cashfree.send_webhook(json.loads(first.body), body=first.body)
    assert during.status == 200 and during.answer["duplicate"] is True
    assert Payment.objects.get(pk=payment.pk).status == S.PROCESSING
    # The first one's process died: after RETAKE_AFTER the next delivery applies it.
    AcquirerNotice.objects.update(updated_at=timezone.now() - RETAKE_AFTER - timedelta(seconds=1))
    after = cashfree.send_webhook(json.loads(first.body), body=first.body)
    assert after.status == 200 and after.answer["status"] == "APPLIED"
    assert Payment.objects.get(pk=payment.pk).status == S.SUCCESS


def test_a_refund_known_to_cashfree_by_a_derived_id_is_found(shop, client, cashfree):
    long_id = "merchant-refund-" + "7" * 40  # longer than Cashfree's 40 characters
    refund = refunding(shop, client, cashfree, refund_id=long_id)
    cashfree.settle_refund(refund.payment.sabpaisa_txn_id, cashfree_refund_id(long_id), "SUCCESS")
    assert cashfree.deliveries[-1].answer["status"] == "APPLIED"
    assert Refund.objects.get(pk=refund.pk).status == Refund.Status.SUCCESS


def test_a_refund_notice_contradicting_a_final_refund_is_kept_as_not_applied(shop, client, cashfree):
    from payments.acquirer.base import AcquirerAnswer, Outcome, RefundNotice
    from refunds.notices import refund_notice_apply

    refund = refunding(shop, client, cashfree)
    cashfree.settle_refund(refund.payment.sabpaisa_txn_id, refund.refund_id, "SUCCESS")
    refund.refresh_from_db()
    assert refund.status == Refund.Status.SUCCESS

    def notice(outcome):
        return RefundNotice(order_ref=refund.payment.sabpaisa_txn_id, refund_ref=refund.refund_id,
                            amount=refund.amount, answer=AcquirerAnswer(outcome, reference="ARN1", message="cancelled"))

    same = dict(payment=refund.payment, matches=lambda refund_id: refund_id == refund.refund_id, source="test")
    assert refund_notice_apply(notice=notice(Outcome.APPROVED), **same)[0] is True  # the same word again
    applied, result = refund_notice_apply(notice=notice(Outcome.DECLINED), **same)
    assert not applied and "SUCCESS" in result
    refund.refresh_from_db()
    assert refund.status == Refund.Status.SUCCESS
