"""A bank slower than the refund's claim: the sweep submits the refund again, both answers
arrive, and the refund is recorded once, without an error escaping the task or the sweep."""
import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.acquirer.base import AcquirerUnavailable
from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from refunds import services, submission
from refunds.models import Refund, RefundEvent
from refunds.services import REFUND_CLAIM_SECONDS, refund_create, refund_submit, refunds_pending_process
from refunds.tasks import refund_process
from tests.support.factories import make_success_payment
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


class ScriptedBank:
    """The Acquirer protocol's refund, answered by the sandbox unless the test scripted the
    n-th call (`before[n]` runs first, as "while the bank is still thinking"; `raise_for`
    refund ids always raise)."""

    def __init__(self):
        self.sandbox = SandboxAcquirer()
        self.calls: list[str] = []
        self.answers = []
        self.before: dict[int, callable] = {}
        self.raise_for: dict[str, Exception] = {}

    def refund(self, *, payment, amount, refund_id):
        self.calls.append(refund_id)
        hook = self.before.get(len(self.calls))
        if hook is not None:
            hook()
        if refund_id in self.raise_for:
            raise self.raise_for[refund_id]
        answer = self.sandbox.refund(payment=payment, amount=amount, refund_id=refund_id)
        self.answers.append(answer)
        return answer


@pytest.fixture
def bank(monkeypatch):
    bank = ScriptedBank()
    monkeypatch.setattr(submission, "acquirer_for", lambda payment: bank)  # the acquirer that took the payment
    return bank


def _refund(merchant, amount=1_000):
    return refund_create(merchant=merchant.merchant, payment=make_success_payment(merchant), amount=amount).refund


def _after_claim():
    return timezone.now() + timedelta(seconds=REFUND_CLAIM_SECONDS + 1)


def test_a_slow_bank_answering_a_resubmitted_refund_records_it_once_and_raises_nothing(merchant, bank, caplog):
    refund = _refund(merchant)
    # The first submission's answer takes longer than the claim: meanwhile the sweep submits
    # the refund again, and that answer is recorded first.
    bank.before[1] = lambda: refund_submit(refund_pk=refund.pk, now=_after_claim())

    with caplog.at_level(logging.INFO, logger="refunds"):
        result = refund_process(refund.pk)  # the task: must not fail

    assert result is None
    refund.refresh_from_db()
    assert bank.calls == [refund.refund_id, refund.refund_id]
    assert refund.status == "SUCCESS" and refund.bank_attempts == 2
    assert len(WebhookEvent.objects.filter(subject_id=refund.refund_id, event_type="refund.processed")) == 1
    # The sandbox is idempotent on the refund id: both answers name the same bank refund.
    assert {a.reference for a in bank.answers} == {refund.bank_refund_reference}
    late = RefundEvent.objects.get(refund=refund, detail__action="answer after final")
    assert late.detail["attempt"] == 1 and late.detail["reference"] == refund.bank_refund_reference
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_late_answer_contradicting_the_recorded_one_is_logged_as_an_error(merchant, bank, caplog):
    refund = _refund(merchant)

    def meanwhile():
        services.refund_mark_failed(refund_pk=refund.pk, reason="declined on the resubmission")

    bank.before[1] = meanwhile
    with caplog.at_level(logging.INFO, logger="refunds"):
        result = refund_submit(refund_pk=refund.pk)
    assert result.status == "FAILED"
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and refund.refund_id in errors[0] and "reconcile" in errors[0]


def test_an_error_from_an_old_submission_does_not_free_the_newer_claim(merchant, bank):
    refund = _refund(merchant)
    resubmitted_at = _after_claim()
    # While the first submission waits, the sweep claims the refund again (its bank call is
    # still in flight when the first one's error comes back).
    bank.before[1] = lambda: submission._refund_claim(refund.pk, resubmitted_at)
    bank.raise_for[refund.refund_id] = AcquirerUnavailable("timed out")

    refund_submit(refund_pk=refund.pk)

    refund.refresh_from_db()
    assert refund.status == "INITIATED" and refund.bank_attempts == 2
    assert refund.claimed_until == resubmitted_at + timedelta(seconds=REFUND_CLAIM_SECONDS)
    # Nobody else may submit it while the second worker holds it.
    assert refund_submit(refund_pk=refund.pk, now=resubmitted_at + timedelta(seconds=1)) is None


def test_one_refund_that_raises_does_not_stop_the_sweep(merchant, bank, caplog):
    broken, fine = _refund(merchant), _refund(merchant)
    Refund.objects.update(created_at=timezone.now() - timedelta(minutes=5))
    bank.raise_for[broken.refund_id] = RuntimeError("a bug in the acquirer client")

    with caplog.at_level(logging.ERROR, logger="refunds"):
        assert refunds_pending_process() == 1

    broken.refresh_from_db()
    fine.refresh_from_db()
    assert fine.status == "SUCCESS"
    assert broken.status == "INITIATED"  # its outcome is unknown: never failed for it
    assert sorted(bank.calls) == sorted([broken.refund_id, fine.refund_id])
    assert [r for r in caplog.records if r.levelno == logging.ERROR and r.exc_info]


def test_the_sandbox_answers_the_same_refund_id_with_the_same_outcome(merchant):
    sandbox = SandboxAcquirer()
    payment = make_success_payment(merchant, amount=200_000)
    first = sandbox.refund(payment=payment, amount=1_000, refund_id="R-1")
    assert sandbox.refund(payment=payment, amount=1_000, refund_id="R-1") == first
    assert sandbox.refund(payment=payment, amount=1_000, refund_id="R-2").reference != first.reference
    declined = sandbox.refund(payment=payment, amount=100_013, refund_id="R-3")
    assert sandbox.refund(payment=payment, amount=100_013, refund_id="R-3") == declined
    assert declined.outcome.value == "declined"
