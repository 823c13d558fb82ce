"""Settlements with two acquirers enabled (docs/settlements.md, "Two acquirers"): each acquirer's
report is fetched with its own cursor, one failing does not cost the other its fetch, a line is
linked only to a payment its own acquirer took, and a payment is "never settled" only once its
own acquirer's report, read past its due date, does not list it."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.acquirer import acquirer_named
from payments.acquirer.base import AcquirerError, SettlementEventFound
from payments.models import AcquirerRoute, Payment
from payments.services.upi import hosted_upi_intent
from refunds.models import ReconException, Settlement, SettlementFetch, SettlementLine
from refunds.settlement_tasks import settlements_fetch_task
from refunds.settlements import fetching
from refunds.settlements.reconcile import reconcile
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
from tests.support.two_acquirers import both  # noqa: F401 - a fixture
from tests.support.factories import make_merchant, make_payment

pytestmark = pytest.mark.django_db(transaction=True)



def _paid_at(merchant, acquirer: str) -> Payment:
    """A hosted UPI payment routed to `acquirer`, its money taken there."""
    AcquirerRoute.objects.update_or_create(merchant=merchant, method="UPI", defaults={"acquirers": acquirer})
    payment = make_payment(merchant, status=Payment.Status.PENDING, amount=25_000)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="9876543210", customer_email="asha@example.in")
    payment = hosted_upi_intent(payment_id=payment.pk)
    assert payment.acquirer == acquirer
    return payment


def test_the_beat_fetches_each_enabled_acquirers_settlements_and_links_each_to_its_own_payments(both):
    cashfree, razorpay = both
    merchant = make_merchant().merchant
    at_cashfree, at_razorpay = _paid_at(merchant, "cashfree"), _paid_at(merchant, "razorpay")
    cashfree.settle_payment(at_cashfree.sabpaisa_txn_id, notify=False)
    razorpay.settle_payment(at_razorpay.sabpaisa_txn_id, notify=False)
    cashfree.settle()
    razorpay.settle()

    assert settlements_fetch_task() == 2
    assert set(Settlement.objects.values_list("acquirer", flat=True)) == {"cashfree", "razorpay"}
    assert set(SettlementFetch.objects.values_list("acquirer", flat=True)) == {"cashfree", "razorpay"}
    for payment in (at_cashfree, at_razorpay):
        line = SettlementLine.objects.get(kind="payment", payment=payment)
        assert line.settlement.acquirer == payment.acquirer
    assert settlements_fetch_task() == 0  # idempotent on each acquirer's ids


def test_one_acquirer_failing_does_not_stop_the_others_fetch_and_is_fetched_next_run(both):
    cashfree, razorpay = both
    merchant = make_merchant().merchant
    at_cashfree, at_razorpay = _paid_at(merchant, "cashfree"), _paid_at(merchant, "razorpay")
    cashfree.settle_payment(at_cashfree.sabpaisa_txn_id, notify=False)
    razorpay.settle_payment(at_razorpay.sabpaisa_txn_id, notify=False)
    cashfree.settle()
    razorpay.settle()
    cashfree.unavailable = True

    with pytest.raises(AcquirerError):
        settlements_fetch_task()  # the run shows as failed ...
    # ... after Razorpay's settlements were stored all the same.
    assert list(Settlement.objects.values_list("acquirer", flat=True)) == ["razorpay"]
    assert SettlementLine.objects.get(kind="payment").payment == at_razorpay

    cashfree.unavailable = False
    assert settlements_fetch_task() == 1
    assert SettlementLine.objects.get(kind="payment", payment=at_cashfree).settlement.acquirer == "cashfree"


def test_a_line_naming_another_acquirers_payment_is_left_unlinked(both):
    merchant = make_merchant().merchant
    at_razorpay = _paid_at(merchant, "razorpay")
    settlement = Settlement.objects.create(acquirer="cashfree", processor_settlement_id="CF1", gross=25_000, net=25_000)
    cashfree = acquirer_named("cashfree")
    added = fetching.lines_store(cashfree, settlement, [SettlementEventFound(
        event_id="e1", kind="payment", amount=25_000, fee=0, tax=0, order_ref=at_razorpay.sabpaisa_txn_id)])
    assert added == 1
    assert SettlementLine.objects.get().payment is None  # Cashfree never took it: unknown_reference


def test_a_payment_is_never_settled_only_once_its_own_acquirers_report_is_read_past_its_due_date(settings):
    settings.GATEWAY_ACQUIRER, settings.GATEWAY_ACQUIRERS = "sandbox", ["sandbox", "razorpay"]
    merchant = make_merchant()
    payment = make_payment(merchant, amount=10_000)
    completed = timezone.now() - timedelta(days=5)
    Payment.objects.filter(pk=payment.pk).update(acquirer="razorpay", completed_at=completed)
    # The configured acquirer's report is read to now and lists nothing of it: not its business.
    SettlementFetch.objects.create(acquirer="sandbox", finished_until=timezone.now())
    # Razorpay's fetch has been failing since before the payment was due: no judgement yet.
    fetch = SettlementFetch.objects.create(acquirer="razorpay", finished_until=completed + timedelta(days=1))
    assert reconcile().found["not_settled"] == 0
    # Its report read past the due date, without it: now it is missing.
    SettlementFetch.objects.filter(pk=fetch.pk).update(finished_until=timezone.now())
    assert reconcile().found["not_settled"] == 1
    fault = ReconException.objects.get(kind="not_settled")
    assert (fault.payment_id, fault.evidence["acquirer"]) == (payment.pk, "razorpay")
