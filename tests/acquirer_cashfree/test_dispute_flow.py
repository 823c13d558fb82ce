"""Disputes with Cashfree, end to end against the stateful double (every answer and webhook it
gives checked against the vendored description): its signed dispute webhooks through the inbound
door, a lost one caught by the disputes sweep, a late update read from Cashfree, and the
merchant's accept reaching Cashfree."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.acquirer import get_acquirer
from refunds.disputes.sweep import disputes_sweep
from refunds.models import Dispute
from tests.acquirer_cashfree.double import CashfreeDouble, cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_cashfree.test_double import CUSTOMER
from tests.support.factories import make_merchant, make_success_payment
from webhooks.models import WebhookEvent

from payments.acquirer.cashfree.client import CashfreeClient, idempotency_key

pytestmark = pytest.mark.django_db(transaction=True)
S = Dispute.Status


def paid_at_cashfree(double: CashfreeDouble, payment) -> None:
    """The payment's order at Cashfree, paid: what a dispute is raised against."""
    client = CashfreeClient(base_url=double.base_url, client_id=double.client_id, client_secret=double.client_secret)
    order = client.create_order(order_id=payment.sabpaisa_txn_id, amount=payment.amount, customer=CUSTOMER,
                                idempotency_key=idempotency_key(payment.sabpaisa_txn_id, "order"),
                                return_url="https://gw.example/return", notify_url="https://gw.example/hook")
    client.pay_upi_qr(payment_session_id=order.payment_session_id,
                      idempotency_key=idempotency_key(payment.sabpaisa_txn_id, "pay"))
    double.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False)


@pytest.fixture
def shop(cashfree_double, live_server):
    cashfree_double.webhook_url = live_server.url + "/acquirer/cashfree/webhooks"
    return make_merchant(code="DISPUTED")


def dispute_events(shop):
    return [e.event_type for e in WebhookEvent.objects.filter(merchant=shop.merchant,
                                                               event_type__startswith="dispute.")
            .order_by("created_at", "id")]


def test_a_dispute_webhook_opens_the_dispute_and_its_close_closes_it(cashfree_double, shop):
    payment = make_success_payment(shop, amount=250_000)
    paid_at_cashfree(cashfree_double, payment)
    entity = cashfree_double.open_dispute(payment.sabpaisa_txn_id, amount=100_000)
    assert cashfree_double.deliveries[-1].status == 200, cashfree_double.deliveries[-1].answer
    dispute = Dispute.objects.get()
    assert (dispute.payment_id, dispute.acquirer, dispute.processor_dispute_id) == (
        payment.pk, get_acquirer().name, str(entity["dispute_id"]))
    assert (dispute.status, dispute.kind, dispute.amount) == (S.NEEDS_RESPONSE, "chargeback", 100_000)
    assert [e["code"] for e in dispute.preferred_evidence] == ["Delivery/Service Proof", "Refund Proof"]

    # The same delivery again: recorded once, nothing changes.
    first = cashfree_double.deliveries[-1]
    again = cashfree_double.send_webhook({}, body=first.body)
    assert again.status == 200 and again.answer["duplicate"] is True

    cashfree_double.move_dispute(str(entity["dispute_id"]), "MERCHANT_WON")
    dispute.refresh_from_db()
    assert dispute.status == S.WON and dispute.resolved_at is not None
    assert dispute_events(shop) == ["dispute.opened", "dispute.closed"]


def test_lost_webhooks_are_caught_by_the_sweep(cashfree_double, shop):
    payment = make_success_payment(shop, amount=250_000)
    paid_at_cashfree(cashfree_double, payment)
    entity = cashfree_double.open_dispute(payment.sabpaisa_txn_id, notify=False)  # DISPUTE_CREATED lost
    assert not Dispute.objects.exists()
    result = disputes_sweep()
    assert result.found == 1 and not result.errors
    dispute = Dispute.objects.get()
    assert dispute.status == S.NEEDS_RESPONSE

    cashfree_double.move_dispute(str(entity["dispute_id"]), "DOCS_RECEIVED", notify=False)  # update lost
    later = timezone.now() + timedelta(hours=7)  # past the sweep's reading age
    assert disputes_sweep(now=later).refreshed == 1
    dispute.refresh_from_db()
    assert dispute.status == S.UNDER_REVIEW
    assert dispute_events(shop) == ["dispute.opened", "dispute.updated"]


def test_the_merchants_accept_reaches_cashfree(api, cashfree_double, shop):
    payment = make_success_payment(shop, amount=250_000)
    paid_at_cashfree(cashfree_double, payment)
    entity = cashfree_double.open_dispute(payment.sabpaisa_txn_id)
    dispute = Dispute.objects.get()
    answer = api.post(f"/api/v2/disputes/{dispute.dispute_id}/accept", **shop.headers)
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "ACCEPTED"
    assert cashfree_double.disputes[str(entity["dispute_id"])]["dispute_status"] == "CHARGEBACK_MERCHANT_ACCEPTED"
    # GET: the opening webhook carried no preferred_evidence, so the dispute was read for it.
    assert [c.method for c in cashfree_double.calls if "/disputes/" in c.path] == ["GET", "PUT"]
    # Cashfree's own close webhook afterwards changes nothing more.
    cashfree_double.send_webhook(cashfree_double.dispute_webhook(cashfree_double.disputes[str(entity["dispute_id"])]))
    assert dispute_events(shop) == ["dispute.opened", "dispute.closed"]


def test_the_accept_cashfree_does_not_answer_is_service_unavailable_and_changes_nothing(api, cashfree_double, shop):
    payment = make_success_payment(shop, amount=250_000)
    paid_at_cashfree(cashfree_double, payment)
    cashfree_double.open_dispute(payment.sabpaisa_txn_id)
    dispute = Dispute.objects.get()
    cashfree_double.unavailable = True
    answer = api.post(f"/api/v2/disputes/{dispute.dispute_id}/accept", **shop.headers)
    assert answer.status_code == 400 and answer.json()["errorCode"] == "SERVICE_UNAVAILABLE"
    dispute.refresh_from_db()
    assert dispute.status == S.NEEDS_RESPONSE and dispute.accepted_at is None
