"""The pending sweep backs off refunds the bank keeps answering with an error, takes the most
overdue first, and after REFUND_MAX_BANK_ATTEMPTS leaves a refund INITIATED and flagged for
manual review, never FAILED."""
import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.core.errors import ValidationError
from payments.acquirer.base import AcquirerError
from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from refunds import submission
from refunds.models import Refund, RefundEvent
from refunds.services import (
    REFUND_MAX_BANK_ATTEMPTS,
    refund_create,
    refund_mark_processed,
    refund_retry_delay,
    refund_review_release,
    refunds_pending_process,
)
from refunds.tasks import refund_process
from tests.support.factories import make_success_payment
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


class ErringBank:
    """The Acquirer protocol's refund: an error, every time, for the refund ids in `broken`;
    the sandbox's answer for the others."""

    def __init__(self):
        self.broken: set[str] = set()
        self.calls: list[str] = []

    def refund(self, *, payment, amount, refund_id):
        self.calls.append(refund_id)
        if refund_id in self.broken:
            raise AcquirerError("the bank answers this one with an error, every time")
        return SandboxAcquirer().refund(payment=payment, amount=amount, refund_id=refund_id)


@pytest.fixture
def bank(monkeypatch):
    bank = ErringBank()
    monkeypatch.setattr(submission, "acquirer_for", lambda payment: bank)  # the acquirer that took the payment
    return bank


def _refund(merchant, *, age=timedelta(minutes=5)) -> Refund:
    refund = refund_create(merchant=merchant.merchant, payment=make_success_payment(merchant), amount=1_000).refund
    Refund.objects.filter(pk=refund.pk).update(created_at=timezone.now() - age)
    return Refund.objects.get(pk=refund.pk)


def _fresh(refund) -> Refund:
    return Refund.objects.get(pk=refund.pk)


def test_refunds_the_bank_keeps_erring_on_do_not_starve_the_others(merchant, bank):
    poison = [_refund(merchant, age=timedelta(minutes=10)), _refund(merchant, age=timedelta(minutes=9))]
    healthy = _refund(merchant, age=timedelta(minutes=5))
    bank.broken = {r.refund_id for r in poison}

    for _ in range(5):
        refunds_pending_process(older_than_seconds=0, max_refunds=2)

    assert _fresh(healthy).status == "SUCCESS"
    assert [_fresh(r).bank_attempts for r in poison] == [1, 1]  # backing off, not resubmitted every run
    assert all(_fresh(r).status == "INITIATED" for r in poison)


def test_each_bank_error_doubles_the_wait_before_the_next_submission(merchant, bank):
    refund = _refund(merchant)
    bank.broken = {refund.refund_id}
    now = timezone.now()
    waits = []
    for attempt in range(1, 6):
        assert refunds_pending_process(now=now) == 1
        due = _fresh(refund).claimed_until
        waits.append((due - now).total_seconds())
        assert _fresh(refund).bank_attempts == attempt
        assert refunds_pending_process(now=due - timedelta(seconds=1)) == 0  # still backing off
        now = due
    assert waits == [60, 120, 240, 480, 960]
    assert refund_retry_delay(20) == timedelta(hours=1)  # capped


def test_the_sweep_takes_the_most_overdue_refund_first(merchant, bank):
    now = timezone.now()
    erred = _refund(merchant, age=timedelta(hours=2))  # older, but its backoff ended only just now
    Refund.objects.filter(pk=erred.pk).update(bank_attempts=3, claimed_until=now - timedelta(seconds=1))
    never_submitted = _refund(merchant, age=timedelta(minutes=5))  # due since its creation

    assert refunds_pending_process(now=now, max_refunds=1) == 1
    assert _fresh(never_submitted).status == "SUCCESS"
    assert _fresh(erred).bank_attempts == 3
    assert refunds_pending_process(now=now, max_refunds=1) == 1
    assert _fresh(erred).status == "SUCCESS"


def test_after_the_last_attempt_a_refund_stays_pending_and_is_flagged_for_review(merchant, bank, caplog):
    refund = _refund(merchant)
    bank.broken = {refund.refund_id}
    now = timezone.now()
    with caplog.at_level(logging.ERROR, logger="refunds"):
        for _ in range(REFUND_MAX_BANK_ATTEMPTS + 3):
            refunds_pending_process(now=now)
            now += timedelta(days=1)

    refund = _fresh(refund)
    assert len(bank.calls) == REFUND_MAX_BANK_ATTEMPTS == refund.bank_attempts == 10
    assert refund.status == "INITIATED" and refund.needs_review
    assert not WebhookEvent.objects.filter(subject_id=refund.refund_id).exists()  # never silently failed
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and refund.refund_id in errors[0] and "manual review" in errors[0]
    assert RefundEvent.objects.filter(refund=refund, detail__action="needs review").count() == 1

    refund_process(refund.pk)  # a stray task does not submit it either
    assert len(bank.calls) == REFUND_MAX_BANK_ATTEMPTS


def test_a_refund_whose_last_submission_never_came_back_is_flagged_without_asking_the_bank(merchant, bank):
    refund = _refund(merchant)
    # The 10th submission's worker died: its claim ran out with no answer recorded.
    Refund.objects.filter(pk=refund.pk).update(bank_attempts=REFUND_MAX_BANK_ATTEMPTS,
                                               claimed_until=timezone.now() - timedelta(seconds=1))
    assert refunds_pending_process() == 0
    refund = _fresh(refund)
    assert bank.calls == [] and refund.needs_review and refund.status == "INITIATED"


def test_staff_can_release_a_flagged_refund_for_a_fresh_round_of_attempts(merchant, bank, admin_user):
    refund = _refund(merchant)
    Refund.objects.filter(pk=refund.pk).update(bank_attempts=REFUND_MAX_BANK_ATTEMPTS, needs_review=True)
    assert refunds_pending_process() == 0

    released = refund_review_release(refund_pk=refund.pk, actor=admin_user)
    assert not released.needs_review and released.bank_attempts == 0
    assert refunds_pending_process() == 1
    assert _fresh(refund).status == "SUCCESS"
    with pytest.raises(ValidationError):
        refund_review_release(refund_pk=refund.pk, actor=admin_user)  # final: nothing to release


def test_recording_the_banks_answer_by_hand_clears_the_flag(merchant):
    refund = _refund(merchant)
    Refund.objects.filter(pk=refund.pk).update(bank_attempts=REFUND_MAX_BANK_ATTEMPTS, needs_review=True)
    refund_mark_processed(refund_pk=refund.pk, bank_reference="RF000000000042")
    refund = _fresh(refund)
    assert refund.status == "SUCCESS" and not refund.needs_review
