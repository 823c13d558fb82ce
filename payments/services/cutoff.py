"""Hosted steps whose acquirer answer was cut off: asked about with the acquirer's status query.

Finishing a card (the OTP), a bank's or wallet's page or a transfer asks the acquirer to move
money, once: the step is claimed (`acquirer_call_started_at`, committed under the row lock)
before the call, and the claim ends with the answer (payments.services.hosted.steps). When the web
process or the database goes down between the call and the record of its answer, the claim
stays and every retry is refused ("already being confirmed with the bank"), because a claimed
step is never asked twice. Without this module such a payment waited for its expiry, even
when the acquirer had approved it and the customer's money had moved.

The payments sweep (payments.tasks.payments_expire_sweep) runs `hosted_unanswered_reconcile`
before it expires anything. A claim older than STATUS_QUERY_AFTER (longer than any acquirer
call may take) belongs to a call that will never be answered here, so the acquirer is asked
what it answered (`Acquirer.call_status`), and that answer is recorded (step
`<step>_status`) and followed as the call's own would have been:

- APPROVED: SUCCESS with the acquirer's reference;
- DECLINED: FAILED, except for a transfer, whose unconfirmed funds leave it open;
- no such call (the request never reached the acquirer): the claim is given back, so the
  customer can try the step again;
- the acquirer unavailable: asked again a period later.

A payment can also go final while its claim is cut off: the expiry waits for a claim only as
long as STATUS_QUERY_AFTER (payments.services.transitions), and the customer may cancel. It is
asked about all the same, because the money may have moved: an approval of a payment that is
EXPIRED or FAILED is kept in its story with the RRN and reversed
(payments.services.reversals.payment_late_approval_handle), as any late approval; then,
whatever the answer, the claim is cleared.

Each payment is taken by a conditional update of its claim's time first, so two sweeps at
once ask about it once, and the next period's sweep asks again only if it is still claimed.
"""
from __future__ import annotations

import logging

from django.db.models.functions import Now
from django.utils import timezone

from payments.acquirer import acquirer_for
from payments.acquirer.base import AcquirerError, AcquirerRefused
from payments.models import Payment, PaymentEvent
from payments.services.acquirer_answers import STATUS_QUERY_AFTER, status_queries_run
from payments.services.hosted import BANK_MODES, TRANSFER_MODES, acquirer_call_release, step_answer_apply
from payments.services.transitions import payment_note
from payments.state import InvalidTransition

logger = logging.getLogger("payments.cutoff")

S = Payment.Status
M = Payment.Mode

# The money-moving call each hosted method claims.
STEP_BY_MODE = {M.CARD: "card_verify_otp", **{mode: "bank_authorize" for mode in BANK_MODES},
                **{mode: "transfer_received" for mode in TRANSFER_MODES}}
NO_SUCH_CALL = "no such call"


def hosted_cut_off_calls(now):
    """Payments whose step was claimed STATUS_QUERY_AFTER ago or more (or last asked about that
    long ago) and is still claimed, open or final, oldest first. Read through the partial index
    payment_call_claimed: only payments with a claim."""
    return (Payment.objects
            .filter(acquirer_call_started_at__lte=now - STATUS_QUERY_AFTER, payment_mode__in=list(STEP_BY_MODE))
            .order_by("acquirer_call_started_at"))


def hosted_unanswered_reconcile(*, now=None, limit: int = 100) -> int:
    """Ask the acquirer about each cut-off hosted call and act on its answer (the module's
    docstring). Returns how many payments were asked about."""
    now = now or timezone.now()
    due = list(hosted_cut_off_calls(now).values_list("pk", "payment_mode", "acquirer_call_started_at")[:limit])
    # Taken for this period: a concurrent sweep finds the claim's time moved and passes it by.
    # (Not a status change: the payment's status, open or final, is left as it is.)
    return status_queries_run(
        due, what="acquirer call",
        take=lambda row: bool(Payment.objects.filter(pk=row[0], acquirer_call_started_at=row[2])
                              .update(acquirer_call_started_at=Now(), updated_at=Now())),
        ask=lambda row: _reconcile_one(row[0], STEP_BY_MODE[row[1]]))


def _reconcile_one(payment_id: int, step: str) -> None:
    payment = Payment.objects.select_related("merchant").get(pk=payment_id)
    status_step = f"{step}_status"
    try:
        answer = acquirer_for(payment).call_status(payment=payment, step=step)
    except AcquirerRefused as exc:
        acquirer_call_release(payment_id, open_only=False)
        payment_note(payment_id=payment_id, kind=PaymentEvent.Kind.ACQUIRER,
                     detail={"step": status_step, "outcome": NO_SUCH_CALL, "message": str(exc),
                             "result": "claim released"})
        logger.warning("payment %s: the acquirer never got its %s call; the claim is given back",
                       payment.sabpaisa_txn_id, step)
        return
    except AcquirerError as exc:  # unavailable: asked again a period later
        logger.warning("payment %s: status query of its %s call failed: %s", payment.sabpaisa_txn_id, step, exc)
        return
    logger.info("payment %s: status of its cut-off %s call: %s", payment.sabpaisa_txn_id, step, answer.outcome.value)
    try:
        step_answer_apply(payment, step, answer, recorded_as=status_step)
    except InvalidTransition:
        pass  # final already: the answer is recorded, an approval reversed
    acquirer_call_release(payment_id, open_only=False)  # settled, whatever the status
