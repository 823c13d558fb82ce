"""Late approvals, and their reversal through the acquirer.

An approval is late when the acquirer approved (the customer's money moved) but the payment can
no longer take it: it went EXPIRED or FAILED meanwhile (the merchant was told it did not
happen), or the approval is for an attempt the customer abandoned. Nobody should have to notice
it for the customer to get the money back:

- `payment_late_approval_handle` (whoever met the late approval: a hosted step, a UPI approval,
  the status query of a cut-off call, the checkout for an abandoned attempt) records it, in one
  durable transaction under the payment's lock: the approval in the payment's story with its
  RRN (logged at ERROR), and a PENDING Reversal, once per approval however often it is reported.
  The reversal is queued for the worker once that commits.
- `reversal_submit` (payments.services.reversal_sending: the task, and the beat's sweep for whatever a lost message or a dead
  worker left) claims the reversal, asks the acquirer to reverse with no lock held
  (Acquirer.reverse, idempotent on the reversal's id), then records the answer: REVERSED with
  the acquirer's reference, or FAILED (refused: the console's "Needs attention" queue, for a
  person). No answer (an error, a timeout) leaves it PENDING, sent again after a backoff.

An approval at an acquirer the payment failed over from (its order there was opened after all,
and paid) is the same money to give back, at that acquirer: `payment_failed_over_approval_handle`
records it with the acquirer on the Reversal (Reversal.acquirer), and `reversal_submit` sends it
there (docs/decisions.md, "Two acquirers: routing and safe failover").

Every status change of a reversal is checked against payments.state.REVERSAL_TRANSITIONS and
appended to the payment's story (a PaymentEvent of kind `reversal`). The merchant gets no
webhook for it: the payment's own status does not change (it stays the final status the
merchant heard), and the interface's events are a payment's final statuses (docs/decisions.md).
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from gateway.core.broker import tasks_publish
from gateway.core.errors import ValidationError
from gateway.platform.services import audit_record
from payments.locks import lock_payment, lock_reversal
from payments.models import Payment, PaymentEvent, Reversal
from payments.reversal_tasks import reversal_submit_task
from payments.services.acquirer_answers import NEEDS_REVERSAL
# Sending (the task's work) lives apart, so that the task this module queues imports no module
# that imports it; these names are part of this module's surface.
from payments.services.reversal_sending import (  # noqa: F401
    REVERSAL_CLAIM,
    REVERSAL_RETRY_BASE,
    REVERSAL_RETRY_MAX,
    SWEEP_MAX_REVERSALS,
    reversal_acquirer,
    reversal_acquirer_id,
    reversal_event,
    reversal_retry_delay,
    reversal_status_set,
    reversal_submit,
    reversals_due,
    reversals_pending_process,
)

logger = logging.getLogger("payments.reversals")

S = Payment.Status
R = Reversal.Status


@transaction.atomic(durable=True)
def payment_late_approval_handle(*, payment_id: int, step: str, bank_rrn: str,
                                 abandoned: bool = False) -> Reversal | None:
    """An approval (`bank_rrn`, from the acquirer call `step`) that the payment cannot take:
    record it and have it reversed (the module's docstring). Returns the reversal (the existing
    one when this approval was reported before), or None when there is nothing to give back:
    the payment is SUCCESS and the approval is not said to be for an abandoned attempt (the
    approval that made it SUCCESS, reported twice). `abandoned=True`: the approval is for an
    attempt the customer left (another method, a cancelled UPI request), so it is reversed
    whatever the payment's status, unless it is the very approval the payment succeeded with.
    Call it outside any transaction; the reversal is sent to the acquirer after it commits."""
    if not bank_rrn:
        raise ValueError("a late approval needs its bank reference")
    # The payment's lock: its status cannot change under this decision, and two reports of one
    # approval queue here, the second finding the first's reversal.
    payment = lock_payment(payment_id)
    if payment.status == S.SUCCESS and (not abandoned or payment.bank_rrn == bank_rrn):
        return None
    return _reversal_open(payment, step=step, bank_rrn=bank_rrn,
                          why=f"payment {payment.sabpaisa_txn_id} is {payment.status} but {step} was approved "
                              f"with RRN {bank_rrn}")


@transaction.atomic(durable=True)
def payment_failed_over_approval_handle(*, payment_id: int, acquirer: str, step: str, bank_rrn: str) -> Reversal:
    """An approval (`bank_rrn`, confirmed by `acquirer`'s status query) at an acquirer this
    payment failed over from: its order there was opened after all, and someone paid it. The
    payment is the other acquirer's and keeps its own status, webhook and return; this money is
    given back where it was taken: a PENDING Reversal addressed to `acquirer`, the approval in the
    payment's story naming both acquirers, once per approval however often it is reported
    (returns the existing reversal then). Queued for the worker once it commits. Call it outside
    any transaction; never with the payment's own acquirer (ValueError)."""
    if not bank_rrn:
        raise ValueError("an approval needs its bank reference")
    # The payment's lock: two reports of one approval (the notice's redelivery, Razorpay's
    # payment.captured and order.paid) queue here, the second finding the first's reversal.
    payment = lock_payment(payment_id)
    own = payment.acquirer or settings.GATEWAY_ACQUIRER
    if acquirer == own:
        raise ValueError(f"{acquirer} is payment {payment.sabpaisa_txn_id}'s own acquirer")
    return _reversal_open(payment, step=step, bank_rrn=bank_rrn, at=acquirer, failed_over_to=own,
                          why=f"payment {payment.sabpaisa_txn_id} failed over from {acquirer} to {own}, but "
                              f"{acquirer} approved it there with RRN {bank_rrn}; reversing it at {acquirer}")


def _reversal_open(payment: Payment, *, step: str, bank_rrn: str, why: str, at: str = "",
                   failed_over_to: str = "") -> Reversal:
    """With `payment` locked: the approval's event, a PENDING reversal (at the acquirer `at`, when
    not the payment's own) and its event, its send queued for after commit; the existing
    reversal when this approval was recorded before."""
    existing = Reversal.objects.filter(payment=payment, bank_rrn=bank_rrn).first()
    if existing is not None:
        return existing
    logger.error("%s: %s", NEEDS_REVERSAL, why)
    elsewhere = {"acquirer": at, "failed_over_to": failed_over_to} if at else {}
    PaymentEvent.objects.create(payment=payment, kind=PaymentEvent.Kind.ACQUIRER,
                                detail={"step": step, "outcome": "approved", "reference": bank_rrn,
                                        "result": NEEDS_REVERSAL, "status": payment.status, **elsewhere})
    reversal = Reversal.objects.create(payment=payment, acquirer=at, step=step[:40], bank_rrn=bank_rrn[:40],
                                       amount=payment.amount, payment_status=payment.status)
    reversal_event(reversal, to_status=R.PENDING, step=step, amount=reversal.amount, paymentStatus=payment.status,
                   **({"failedOverTo": failed_over_to} if at else {}))
    transaction.on_commit(lambda: _enqueue_submit(reversal.pk))
    return reversal


def _enqueue_submit(reversal_pk: int) -> None:
    """Queue the send to the acquirer. A broker outage only delays it: the sweep finds it."""
    tasks_publish([(reversal_submit_task, (reversal_pk,), None)], what=f"reversal {reversal_pk}",
                  fallback="the reversals sweep will send it")


@transaction.atomic(durable=True)
def reversal_settle(*, reversal_pk: int, actor, note: str) -> Reversal:
    """A person gave a late approval's money back another way (the acquirer refused the
    reversal, or never answered it): PENDING or FAILED -> SETTLED, with `note` saying how
    (for example the bank transfer's reference). The reversal leaves the console's queue and
    is not sent to the acquirer again; the payment's story and the audit log say who.
    Raises ValidationError without a note, InvalidReversalTransition when it is final."""
    note = (note or "").strip()
    if not note:
        raise ValidationError("say how the money went back to the customer", field="note")
    reversal = lock_reversal(reversal_pk)
    previous = reversal.status
    reversal_status_set(reversal, R.SETTLED, note=note[:500], settled_by=actor,
                        detail={"by": actor.get_username(), "note": note[:500]})
    audit_record(actor=actor, action="reversal.settle", obj=reversal, merchant=reversal.payment.merchant,
                 before={"status": previous}, after={"status": R.SETTLED, "note": reversal.note})
    return reversal
