"""One acquirer call per money-moving step of a hosted payment (the OTP, the bank's page, funds
arriving), claimed in the database before the call, and what the acquirer's answer to it
means. payments.services.cutoff uses the same functions for calls cut off mid-way."""
from __future__ import annotations

import logging
from typing import NoReturn

from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from gateway.core.errors import ServiceUnavailable, ValidationError
from payments.acquirer.base import AcquirerAnswer, AcquirerError, Outcome
from payments.locks import lock_payment
from payments.models import Payment, PaymentEvent
from payments.services.acquirer_answers import acquirer_answer_record, attempt_left
from payments.services.hosted.session import hosted_expire_if_due
from payments.services.reversals import payment_late_approval_handle
from payments.services.transitions import payment_attempt_failed, payment_mark_succeeded, payment_note
from payments.state import InvalidTransition

logger = logging.getLogger("payments.hosted")

S = Payment.Status


# Finishing a method (the OTP, the bank's page, funds arriving) asks the acquirer to move money.
# Two submissions of one step (two tabs, a double click, a stale page, the same transfer
# reported twice) must not both ask, and nothing may ask once the payment is final. The claim
# is a column (acquirer_call_started_at) set under the row lock and committed before the call:
# unlike a cache lock it cannot lapse however long the acquirer takes, and it is checked
# against the payment's status as it is now, not as the caller's copy last saw it. It is given
# back only when the acquirer gave no answer; an answer makes the payment final. A process that
# dies mid-call leaves it claimed, and the step is never called a second time: a minute later
# the payments sweep asks the acquirer what it answered (its status query) and follows that
# answer, or gives the claim back if the call never reached it (payments.services.cutoff).

@transaction.atomic(durable=True)
def _acquirer_call_claim(*, payment_id: int, modes: tuple, target: str, field: str,
                         challenge: bool = False) -> Payment:
    # Row lock: two submissions of one step queue here; the second sees the first's claim (or
    # the final status it led to) and never reaches the acquirer. The OTP's challenge is
    # written under this lock too (_card_challenge_record).
    payment = lock_payment(payment_id)
    if payment.status != S.PROCESSING or payment.payment_mode not in modes:
        raise InvalidTransition(payment.status, target)
    if challenge and not payment.card_challenge_ref:
        raise ValidationError("the card has not been sent for 3-D Secure yet; wait a moment", field=field)
    if payment.acquirer_call_started_at is not None:
        raise ValidationError("this payment is already being confirmed with the bank; wait a moment", field=field)
    payment.acquirer_call_started_at = timezone.now()
    payment.save(update_fields=["acquirer_call_started_at", "updated_at"])
    return payment


def _claim(payment: Payment, **kwargs) -> Payment:
    """Claim the acquirer call of a step of `payment` (the caller's copy may be stale): an
    open payment past its deadline is expired first. Returns the payment as claimed."""
    payment.refresh_from_db()
    hosted_expire_if_due(payment)
    return _acquirer_call_claim(payment_id=payment.pk, **kwargs)


def acquirer_call_release(payment_id: int, *, open_only: bool = True) -> None:
    """Give the step's claim back: the acquirer gave no answer, so the step may be tried again.
    `open_only=False` clears it on a final payment too (payments.services.cutoff, once the
    call is settled). Not a status change."""
    payments = Payment.objects.filter(pk=payment_id).exclude(acquirer_call_started_at=None)
    if open_only:
        payments = payments.filter(status=S.PROCESSING)
    payments.update(acquirer_call_started_at=None, updated_at=Now())


def _acquirer_no_answer(payment_id: int, step: str, exc: AcquirerError, *, field: str) -> NoReturn:
    """The acquirer did not answer a step that moves money (a timeout, an error of its own). It
    may have acted or not, so this is no decline: the payment stays PROCESSING, its claim is
    given back, and the customer is asked to wait and try again. Only a definite DECLINED
    makes it FAILED. In the sandbox an error means nothing happened; a real acquirer's
    integration must ask the acquirer for the payment's status (a status query) before the
    step is tried again, and reconcile from it. If nobody comes back the payment ends by its
    expiry. Raises ServiceUnavailable naming `field`."""
    logger.warning("no answer from the acquirer to %s of payment %s (%s); left PROCESSING", step, payment_id,
                   type(exc).__name__)
    payment_note(payment_id=payment_id, kind=PaymentEvent.Kind.ACQUIRER,
                 detail={"step": step, "outcome": "no answer", "error": type(exc).__name__})
    acquirer_call_release(payment_id)
    raise ServiceUnavailable("the bank did not answer in time; nothing was decided. Wait a moment, then try again",
                             field=field) from exc


# Why a payment FAILED when the acquirer declined a step without a message of its own.
_DECLINED = {"card_verify_otp": "3-D Secure authentication failed", "bank_authorize": "declined at the bank"}


def step_answer_apply(payment: Payment, step: str, answer: AcquirerAnswer, *,
                      recorded_as: str | None = None) -> Payment | None:
    """The acquirer's answer to a claimed money-moving step (card_verify_otp, bank_authorize,
    transfer_received), recorded as `recorded_as` (default: the step) and applied, the claim
    ending with it: APPROVED makes the payment SUCCESS with its RRN, anything else a failed
    attempt (payment_attempt_failed: the methods again, or FAILED at the last one); both only
    while the claimed attempt is the payment's current one. A
    transfer the bank could not confirm is no decline: its funds stay with the bank, the claim
    is given back and None returned (the payment stays open). An approval that finds the
    payment final already (it expired or was cancelled during the call) is kept with its RRN
    and reversed (payment_late_approval_handle), then InvalidTransition is raised as for any
    late answer."""
    recorded_as = recorded_as or step
    acquirer_answer_record(payment_id=payment.pk, step=recorded_as, answer=answer, attempt=payment.attempt)
    if answer.outcome == Outcome.APPROVED:
        try:
            return payment_mark_succeeded(payment_id=payment.pk, bank_rrn=answer.reference,
                                          attempt=payment.attempt, acquirer_call_started_at=None)
        except InvalidTransition:
            payment_late_approval_handle(payment_id=payment.pk, step=recorded_as, bank_rrn=answer.reference,
                                         abandoned=attempt_left(payment_id=payment.pk, attempt=payment.attempt))
            raise
    if step == "transfer_received":
        acquirer_call_release(payment.pk)
        return None
    return payment_attempt_failed(payment_id=payment.pk, reason=answer.message or _DECLINED.get(step, ""),
                                  attempt=payment.attempt, acquirer_call_started_at=None)
