"""What the acquirer answered, in the payment's story, for every method (hosted and UPI).

Every answer is kept with its `reference`: the bank reference (RRN) of an approval, the
challenge id of a 3-D Secure challenge. That is what lets an approval that could not be
recorded as SUCCESS be reversed (payments.services.reversals).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from django.conf import settings
from django.urls import reverse

from payments.acquirer.base import CALL_TIME_LIMIT, AcquirerAnswer
from payments.models import Payment, PaymentEvent
from payments.services.transitions import payment_note

logger = logging.getLogger("payments.acquirer")

S = Payment.Status

NEEDS_REVERSAL = "approved after final — needs reversal"

# How long a claimed acquirer call may stay without a recorded answer before the payments sweep
# asks the acquirer's status query about it (the process or the database went down mid-call):
# as long as any acquirer call may take. UPI pay requests (payments.services.upi) and hosted
# steps (payments.services.cutoff) alike.
STATUS_QUERY_AFTER = CALL_TIME_LIMIT


def status_queries_run(due: Iterable[tuple], *, take: Callable[[tuple], bool], ask: Callable[[tuple], None],
                       what: str) -> int:
    """The sweep's status queries: for each row of `due` (its first item the payment's key),
    `take(row)` claims it for this period by a conditional update (False: another sweep has
    it, so it is passed by), then `ask(row)` asks the acquirer and acts on the answer. An
    error on one payment never stops the others, nor the expiry after them. Returns how many
    were asked."""
    asked = 0
    for row in due:
        if not take(row):
            continue
        asked += 1
        try:
            ask(row)
        except Exception:  # noqa: BLE001 - one bad row must not stop the others
            logger.exception("payment %s: status query of its cut-off %s failed", row[0], what)
    return asked


def acquirer_answer_record(*, payment_id: int, step: str, answer: AcquirerAnswer,
                           attempt: int | None = None) -> PaymentEvent:
    """Append the acquirer's answer to `step` (card_authorize, card_verify_otp, upi_pay, ...)
    of the hosted attempt `attempt` to the payment's story, with its reference. Never carries
    card data (AcquirerAnswer.raw never does)."""
    return payment_note(payment_id=payment_id, kind=PaymentEvent.Kind.ACQUIRER,
                        detail={**answer.raw, "step": step, "outcome": answer.outcome.value,
                                "message": answer.message, "reference": answer.reference,
                                **({"attempt": attempt} if attempt is not None else {})})


def attempt_left(*, payment_id: int, attempt: int | None) -> bool:
    """Whether an answer about the hosted attempt `attempt` is for an attempt the customer has
    left (the payment has started another since): an approval of it is to be reversed even if
    another attempt paid (payments.services.reversals.payment_late_approval_handle, abandoned)."""
    if attempt is None:
        return False
    current = Payment.objects.filter(pk=payment_id).values_list("attempt", flat=True).first()
    return current is not None and current != attempt


def acquirer_return_url(payment: Payment) -> str:
    """Where an acquirer sends a hosted payment's customer back to after its own pages (its
    3-D Secure, bank or wallet page): the checkout's return view, which asks its status query.
    Empty for an S2S payment, which no browser comes back to. The acquirer is handed it with
    each call that may open the payment at its side (payments.acquirer.base.Acquirer)."""
    if payment.flow != Payment.Flow.HOSTED:
        return ""
    return settings.GATEWAY_PUBLIC_URL + reverse("checkout:acquirer-return", args=[payment.payment_id])
