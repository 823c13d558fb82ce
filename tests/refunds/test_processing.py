"""Submission to the sandbox bank and the recorded answer, calling the task functions directly
(no worker needed): SUCCESS with a reference, FAILED for the test amount, the sweep."""
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.models import Payment
from refunds import selectors, submission
from refunds.models import Refund
from refunds.services import refund_create, refund_mark_failed, refund_mark_processed, refunds_pending_process
from refunds.state import InvalidRefundTransition
from refunds.tasks import refund_process, refunds_pending_sweep
from tests.support.factories import make_success_payment
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

SANDBOX_FAILURE = 100_013


def _refund(merchant, payment, amount=None, **kwargs) -> Refund:
    return refund_create(merchant=merchant.merchant, payment=payment, amount=amount, **kwargs).refund


def _events(refund, event_type):
    return list(WebhookEvent.objects.filter(subject_id=refund.refund_id, event_type=event_type))


def test_processed_refund_has_a_bank_reference_and_records_refund_processed(merchant):
    payment = make_success_payment(merchant, amount=10_000)
    refund = _refund(merchant, payment, 4_000, reason="returned")
    refund_process(refund.pk)
    refund.refresh_from_db()
    assert refund.status == "SUCCESS"
    assert re.fullmatch(r"RF\d{12}", refund.bank_refund_reference)
    assert refund.processed_at is not None and refund.failed_at is None
    event, = _events(refund, "refund.processed")
    payload = event.payload
    assert payload["event"] == "refund.processed"
    assert payload["refundId"] == refund.refund_id
    assert payload["sabpaisaTxnId"] == payment.sabpaisa_txn_id
    assert payload["merchantTxnId"] == payment.merchant_txn_id
    assert payload["refundAmount"] == 4_000
    assert payload["status"] == "SUCCESS"
    assert payload["bankRefundReference"] == refund.bank_refund_reference
    assert payload["paidAmountPaise"] == 10_000 and payload["refundedAmount"] == 4_000
    assert payload["reason"] == "returned"
    assert payload["processedAt"].endswith("Z")


def test_refund_timeline_shows_creation_submission_and_answer(merchant):
    refund = _refund(merchant, make_success_payment(merchant), 1_000)
    refund_process(refund.pk)
    timeline = [(e.kind, e.from_status, e.to_status, e.detail.get("action")) for e in refund.events.all()]
    assert timeline == [("status", "", "INITIATED", None), ("bank", "", "", "submitted"),
                        ("status", "INITIATED", "SUCCESS", None)]


def test_sandbox_test_amount_fails_and_records_refund_failed(merchant):
    payment = make_success_payment(merchant, amount=200_000)
    refund = _refund(merchant, payment, SANDBOX_FAILURE)
    refund_process(refund.pk)
    refund.refresh_from_db()
    assert refund.status == "FAILED"
    assert refund.failure_reason and refund.bank_refund_reference == ""
    assert refund.failed_at is not None and refund.processed_at is None
    event, = _events(refund, "refund.failed")
    assert event.payload["status"] == "FAILED"
    assert event.payload["failureReason"] == refund.failure_reason
    assert event.payload["refundedAmount"] == 0
    assert not _events(refund, "refund.processed")


def test_failed_refund_releases_its_amount(merchant):
    payment = make_success_payment(merchant, amount=SANDBOX_FAILURE)
    failed = _refund(merchant, payment)  # the whole payment: exactly the sandbox failure amount
    payment.refresh_from_db()
    assert selectors.refundable_amount(payment) == 0
    refund_process(failed.pk)
    payment.refresh_from_db()
    assert selectors.refundable_amount(payment) == SANDBOX_FAILURE
    again = _refund(merchant, payment, SANDBOX_FAILURE - 13)
    assert again.status == "INITIATED"


def test_refunded_amount_counts_processed_refunds_only(merchant):
    payment = make_success_payment(merchant, amount=300_000)
    processed = _refund(merchant, payment, 10_000)
    _refund(merchant, payment, 20_000)  # stays INITIATED
    failed = _refund(merchant, payment, SANDBOX_FAILURE)
    refund_process(processed.pk)
    refund_process(failed.pk)
    payment.refresh_from_db()
    assert (payment.refunded_amount, payment.refund_pending_amount) == (10_000, 20_000)
    assert selectors.refundable_amount(payment) == 300_000 - 30_000


def test_the_enquiry_reads_the_refund_totals_from_the_payments_row(merchant):
    """The totals are the payment's columns, moved by each refund's creation and transitions:
    the enquiry reads them with the payment and nothing of refunds."""
    from payments.selectors import payment_get_for_enquiry

    payment = make_success_payment(merchant, amount=300_000)
    other = make_success_payment(merchant, amount=300_000)
    processed = _refund(merchant, payment, 10_000)
    _refund(merchant, payment, 20_000)  # stays INITIATED
    failed = _refund(merchant, payment, SANDBOX_FAILURE)
    _refund(merchant, other, 40_000)  # another payment's: counted for it alone
    refund_process(processed.pk)
    refund_process(failed.pk)
    found = payment_get_for_enquiry(merchant=merchant.merchant, merchant_txn_id=payment.merchant_txn_id)
    assert (found.pk, found.refunded_amount, found.refund_pending_amount) == (payment.pk, 10_000, 20_000)
    other.refresh_from_db()
    assert (other.refunded_amount, other.refund_pending_amount) == (0, 40_000)
    assert selectors.payments_with_refund_totals_off() == []


def test_a_refund_total_that_drifts_from_the_refunds_is_found(merchant):
    """The check every test ends with (tests/conftest.py) sees a total that does not match."""
    payment = make_success_payment(merchant, amount=300_000)
    _refund(merchant, payment, 10_000)
    Payment.objects.filter(pk=payment.pk).update(refund_pending_amount=9_999)
    assert selectors.payments_with_refund_totals_off() == [(payment.pk, 0, 9_999, 0, 10_000)]
    Payment.objects.filter(pk=payment.pk).update(refund_pending_amount=10_000)


def test_processing_twice_submits_once_and_emits_one_event(merchant):
    refund = _refund(merchant, make_success_payment(merchant), 1_000)
    refund_process(refund.pk)
    refund_process(refund.pk)
    refund.refresh_from_db()
    assert refund.bank_attempts == 1
    assert len(_events(refund, "refund.processed")) == 1


def test_a_refund_held_by_another_worker_is_left_alone(merchant):
    refund = _refund(merchant, make_success_payment(merchant), 1_000)
    Refund.objects.filter(pk=refund.pk).update(claimed_until=timezone.now() + timedelta(seconds=30))
    refund_process(refund.pk)
    refund.refresh_from_db()
    assert refund.status == "INITIATED" and refund.bank_attempts == 0


def test_processing_an_unknown_refund_is_a_no_op(merchant):
    """Nothing to submit: nothing is asked of the bank and nothing is written, to that refund
    id or any other."""
    refund = _refund(merchant, make_success_payment(merchant), 1_000)
    assert submission.refund_submit(refund_pk=987_654_321) is None
    refund_process(987_654_321)
    refund.refresh_from_db()
    assert (refund.status, refund.bank_attempts, refund.claimed_until) == ("INITIATED", 0, None)
    assert [event.kind for event in refund.events.all()] == ["status"]
    assert not WebhookEvent.objects.filter(event_type__startswith="refund.").exists()


def test_final_refunds_follow_the_transition_table(merchant):
    refund = _refund(merchant, make_success_payment(merchant), 1_000)
    refund_mark_processed(refund_pk=refund.pk, bank_reference="RF000000000001")
    with pytest.raises(InvalidRefundTransition):
        refund_mark_failed(refund_pk=refund.pk, reason="too late")
    with pytest.raises(InvalidRefundTransition):
        refund_mark_processed(refund_pk=refund.pk, bank_reference="RF000000000002")
    refund.refresh_from_db()
    assert (refund.status, refund.bank_refund_reference) == ("SUCCESS", "RF000000000001")
    assert len(_events(refund, "refund.processed")) == 1


def test_processed_needs_a_bank_reference(merchant):
    refund = _refund(merchant, make_success_payment(merchant), 1_000)
    with pytest.raises(ValueError):
        refund_mark_processed(refund_pk=refund.pk, bank_reference="")


class TestPendingSweep:
    def test_sweep_submits_pending_refunds_whose_task_was_lost(self, merchant):
        payment = make_success_payment(merchant, amount=10_000)
        old = _refund(merchant, payment, 1_000)
        Refund.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(minutes=5))
        fresh = _refund(merchant, payment, 1_000)
        assert refunds_pending_sweep() == 1
        old.refresh_from_db()
        fresh.refresh_from_db()
        assert old.status == "SUCCESS" and fresh.status == "INITIATED"

    def test_sweep_leaves_refunds_a_worker_holds(self, merchant):
        refund = _refund(merchant, make_success_payment(merchant), 1_000)
        Refund.objects.filter(pk=refund.pk).update(
            created_at=timezone.now() - timedelta(minutes=5), claimed_until=timezone.now() + timedelta(seconds=30))
        assert refunds_pending_process() == 0
        later = timezone.now() + timedelta(seconds=31)
        assert refunds_pending_process(now=later) == 1
        refund.refresh_from_db()
        assert refund.status == "SUCCESS" and refund.bank_attempts == 1

    def test_sweep_ignores_final_refunds(self, merchant):
        refund = _refund(merchant, make_success_payment(merchant), 1_000)
        refund_process(refund.pk)
        assert refunds_pending_process(older_than_seconds=0) == 0


def test_refunds_pending_sweep_is_the_task_the_beat_schedules():
    from django.conf import settings

    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert refunds_pending_sweep.name == "refunds.tasks.refunds_pending_sweep"
    assert refunds_pending_sweep.name in scheduled


def test_payment_that_was_refunded_stays_success(merchant):
    payment = make_success_payment(merchant)
    refund_process(_refund(merchant, payment).pk)
    payment.refresh_from_db()
    assert payment.status == Payment.Status.SUCCESS
