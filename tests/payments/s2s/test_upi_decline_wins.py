"""A declined UPI payment cut by a worker kill must end FAILED, not EXPIRED (issue 29, finding 11).

The window: upi_pay records the acquirer's answer in the payment's story (one commit), then
fails the payment (another). A web worker killed between the two left a PROCESSING payment
with the bank's decline on record; the sweep's status query passes over a request that has an
answer, so nothing acted on the decline until the expiry ended the payment EXPIRED and the
merchant heard payment.expired. Reproduced here by killing upi_pay at that very point."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments import tasks
from payments.models import Payment
from payments.services import upi
from webhooks.models import WebhookEvent
from tests.support.factories import signed_body


class WorkerKilled(BaseException):
    """What a SIGKILL does to the request: nothing after this point runs."""


def killed_after_the_answer_is_recorded(monkeypatch):
    def killed(**kwargs):
        raise WorkerKilled()

    monkeypatch.setattr(upi, "payment_attempt_failed", killed)


def test_a_decline_recorded_before_a_worker_kill_wins_over_the_expiry(s2s_merchant, post, monkeypatch):
    created = post(s2s_merchant, signed_body(s2s_merchant)).json()
    payment = Payment.objects.get(payment_id=created["paymentId"])
    killed_after_the_answer_is_recorded(monkeypatch)
    with pytest.raises(WorkerKilled):
        upi.upi_pay_link(upi_uri=created["upiQrString"], payer_vpa="failure@sandbox")
    monkeypatch.undo()  # the next worker runs the real code
    payment.refresh_from_db()
    assert payment.status == "PROCESSING" and payment.payer_vpa == "failure@sandbox"

    # Its deadline passes before anything else happens; then the beat's sweep runs.
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    tasks.payments_expire_sweep()

    payment.refresh_from_db()
    assert payment.status == "FAILED", payment.status
    assert "declined" in payment.failure_reason
    assert list(WebhookEvent.objects.filter(subject_id=payment.sabpaisa_txn_id)
                .values_list("event_type", flat=True)) == ["payment.failed"]


def test_a_request_cut_off_before_its_answer_is_asked_about_before_it_expires(s2s_merchant, post):
    """The other side of the window: killed before the answer was recorded, at the deadline the
    acquirer is asked first (not only STATUS_QUERY_AFTER after the claim)."""
    created = post(s2s_merchant, signed_body(s2s_merchant)).json()
    payment = Payment.objects.get(payment_id=created["paymentId"])
    # Claimed a moment ago (as upi_pay's claim commits it), no answer recorded, deadline passed.
    Payment.objects.filter(pk=payment.pk).update(payer_vpa="failure@sandbox", updated_at=timezone.now(),
                                                 expires_at=timezone.now() - timedelta(seconds=1))
    tasks.payments_expire_sweep()
    payment.refresh_from_db()
    assert payment.status == "FAILED"


def test_following_an_answer_twice_changes_nothing(s2s_merchant, post, monkeypatch):
    created = post(s2s_merchant, signed_body(s2s_merchant)).json()
    killed_after_the_answer_is_recorded(monkeypatch)
    with pytest.raises(WorkerKilled):
        upi.upi_pay_link(upi_uri=created["upiQrString"], payer_vpa="failure@sandbox")
    monkeypatch.undo()
    assert upi.upi_answers_follow() == 1
    assert upi.upi_answers_follow() == 0
    payment = Payment.objects.get(payment_id=created["paymentId"])
    assert payment.status == "FAILED" and payment.events.filter(to_status="FAILED").count() == 1
