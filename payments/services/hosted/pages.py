"""The acquirer's own pages: the issuer's 3-D Secure page, the bank's or the wallet's, where a
real acquirer (payments.acquirer.cashfree) has the customer decide. A method's start sends the
customer there when the acquirer's answer carries a `link`, and the customer comes back to the
checkout's return view, where the acquirer's status query, never the redirect's parameters,
says what became of it. An acquirer without such pages (the sandbox) answers without `link`,
and the checkout keeps its own pages (the OTP form, the sandbox bank page)."""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import timedelta

from payments.acquirer import acquirer_for
from django.db.models import Exists, OuterRef
from django.utils import timezone

from gateway.core.errors import ValidationError
from payments.acquirer.base import AcquirerAnswer, AcquirerError, AcquirerRefused, NoticeRejected
from payments.models import Payment, PaymentEvent
from payments.selectors import sweep_candidates
from payments.services.acquirer_answers import acquirer_answer_record
from payments.services.call_budget import answer_keep, answer_recent, checkout_call_take
from payments.services.hosted.steps import _claim, acquirer_call_release, step_answer_apply
from payments.services.transitions import payment_attempt_abandon, payment_note
from payments.state import InvalidTransition

logger = logging.getLogger("payments.hosted")

S = Payment.Status
M = Payment.Mode

# The key, in the story's record of a start's answer, that says the customer was sent to the
# acquirer's page for that attempt (the link itself, a one-off address of the customer's, is
# not kept).
ON_ACQUIRER_PAGE = "acquirer_page"
# The money-moving step each method's return confirms, and the starts that can send the
# customer away.
RETURN_STEPS = {M.CARD: "card_verify_otp", M.NB: "bank_authorize", M.WALLET: "bank_authorize"}
# The methods whose customer can be on the acquirer's page: payment_page_open's condition
# (payments.models) names the same three, so the sweep reads them through it.
PAGE_MODES = list(RETURN_STEPS)
# A card typed into the processor's own fields (payments.services.hosted.cards,
# hosted_card_fields_open): the processor has the customer from the moment the attempt opens.
CARD_FIELDS_STEP = "card_fields"
START_STEPS = ("card_authorize", "bank_redirect", CARD_FIELDS_STEP)
# How long a customer may stay on the acquirer's page before the payments sweep asks the
# acquirer itself (acquirer_pages_reconcile): a 3-D Secure or bank page takes a minute or two.
ACQUIRER_PAGE_PATIENCE = timedelta(minutes=3)


@dataclass(frozen=True)
class Started:
    """A method started: the payment as it now is, and the acquirer's page to send the customer
    to (empty: the checkout's own next page)."""

    payment: Payment
    link: str = ""


def start_answer_record(*, payment: Payment, step: str, answer: AcquirerAnswer) -> None:
    """Record a start's answer in the payment's story, marked when it sends the customer to the
    acquirer's page (acquirer_page_open)."""
    if answer.link:
        answer = replace(answer, raw={**answer.raw, ON_ACQUIRER_PAGE: True})
    acquirer_answer_record(payment_id=payment.pk, step=step, answer=answer, attempt=payment.attempt)


def acquirer_page_open(payment: Payment) -> bool:
    """Whether the payment's current attempt is waiting on the acquirer's own page: PROCESSING
    by card, net banking or wallet, and its start's answer sent the customer there."""
    if payment.status != S.PROCESSING or payment.payment_mode not in RETURN_STEPS:
        return False
    return payment.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__step__in=START_STEPS,
                                 detail__attempt=payment.attempt,
                                 **{f"detail__{ON_ACQUIRER_PAGE}": True}).exists()


def _card_fields_attempt(payment: Payment) -> bool:
    """Whether the payment's current attempt is a card in the processor's own fields."""
    return payment.payment_mode == M.CARD and payment.events.filter(
        kind=PaymentEvent.Kind.ACQUIRER, detail__step=CARD_FIELDS_STEP, detail__attempt=payment.attempt).exists()


def hosted_acquirer_return(*, payment: Payment, said: dict[str, str] | None = None) -> Payment:
    """The customer is back from the acquirer's page. Whatever the redirect said, the acquirer's
    status query (call_status) of the attempt's step decides, through the step's one claimed
    call (payments.services.hosted.steps): APPROVED makes the payment SUCCESS, DECLINED a failed
    attempt. Not final at the acquirer yet (or not answered): the claim is kept, so nothing else
    asks meanwhile and the payments sweep asks the status query again
    (payments.services.cutoff); the customer waits. The acquirer knowing no such payment: the
    claim is given back and the customer waits (its webhook may still come), except for a card
    in the processor's own fields, which then never reached it: the methods again (abandoned,
    not a failure). `said`: what the processor's card fields said in the customer's browser,
    brought back as the return's parameters; checked first (Acquirer.card_fields_said), and a
    return carrying words the processor did not sign is not acted on (noted in the story; the
    webhook or the sweep asks the status query later). Genuine words decide nothing either:
    the status query does.
    Returns the payment as it now is; does nothing for a payment not on the acquirer's page.
    Raises InvalidTransition when the payment went final meanwhile, ValidationError while the
    step is being confirmed already (another tab, the sweep)."""
    payment.refresh_from_db()
    if not acquirer_page_open(payment):
        return payment
    step = RETURN_STEPS[payment.payment_mode]
    # A card in the processor's own fields has no challenge of ours: the processor's newest card
    # payment of the order is the attempt's.
    fields = _card_fields_attempt(payment)
    if fields and said and not _fields_said_genuine(payment, said):
        return payment
    payment = _claim(payment, modes=(payment.payment_mode,), target=S.SUCCESS, field="status",
                     challenge=payment.payment_mode == M.CARD and not fields)
    try:
        answer = acquirer_for(payment).call_status(payment=payment, step=step)
    except AcquirerRefused as exc:
        acquirer_call_release(payment.pk)
        _return_note_once(payment, {"step": f"{step}_return", "outcome": "no such payment",
                                    "message": str(exc)[:200]})
        if fields:
            # The fields never sent the card to the processor (the customer's browser said no
            # before, or left): nothing can have moved, so the methods again, not a failure. A
            # card payment that reached the processor after all finds its attempt over and, if
            # approved, is reversed (payments.services.reversals).
            try:
                payment_attempt_abandon(payment_id=payment.pk, modes=(M.CARD,),
                                        reason="the card was not sent to the bank")
            except InvalidTransition:
                pass  # moved on meanwhile: go on from where it is
    except AcquirerError as exc:
        logger.info("payment %s back from the acquirer's page, not final there: %s", payment.sabpaisa_txn_id,
                    type(exc).__name__)
        _return_note_once(payment, {"step": f"{step}_return", "outcome": "not final", "error": type(exc).__name__})
    else:
        step_answer_apply(payment, step, answer, recorded_as=f"{step}_return")
    payment.refresh_from_db()
    return payment


def _fields_said_genuine(payment: Payment, said: dict[str, str]) -> bool:
    """Whether the card fields' words brought back to the return are the processor's own (or
    carry nothing to check); a forged or altered return is noted in the story once."""
    try:
        acquirer_for(payment).card_fields_said(payment=payment, said=said)
    except NoticeRejected as exc:
        logger.warning("payment %s: a card return the processor did not sign (%s)", payment.sabpaisa_txn_id, exc)
        _return_note_once(payment, {"step": "card_verify_otp_return", "outcome": "not the processor's word",
                                    "message": str(exc)[:200]})
        return False
    return True


def _return_note_once(payment: Payment, detail: dict) -> None:
    """A return the acquirer had no final answer to, in the payment's story once per attempt and
    outcome: a customer reloading the return, and the sweep asking every few minutes, add
    nothing new to it."""
    detail = {**detail, "attempt": payment.attempt}
    if not payment.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__step=detail["step"],
                                 detail__outcome=detail["outcome"], detail__attempt=payment.attempt).exists():
        payment_note(payment_id=payment.pk, kind=PaymentEvent.Kind.ACQUIRER, detail=detail)


# The question, in the checkout's kept answers (payments.services.call_budget), of a return.
RETURN_ASKED = "return_asked"


def hosted_customer_return(*, payment: Payment, said: dict[str, str] | None = None) -> Payment:
    """The customer's browser is back from the acquirer's page (the checkout's return view):
    hosted_acquirer_return, a call of the checkout's budget, unless the acquirer was asked
    about this attempt's return within CHECKOUT_ACQUIRER_ANSWER_SECONDS (a reload, the back
    button, a second tab): then nothing is asked and nothing written, and the customer waits
    for the answer the webhook or the payments sweep brings. Raises what
    hosted_acquirer_return raises, and CallBudgetSpent before any call past the budget."""
    payment.refresh_from_db()
    if not acquirer_page_open(payment) or answer_recent(payment, RETURN_ASKED):
        return payment
    checkout_call_take(payment)
    answer_keep(payment, RETURN_ASKED, True)
    return hosted_acquirer_return(payment=payment, said=said)


def acquirer_pages_reconcile(*, now=None, limit: int = 200) -> int:
    """The payments sweep's question for customers who went to the acquirer's page and never
    came back (a closed tab, a lost connection) while the acquirer's webhook was lost too: for
    every payment whose current attempt was sent to the acquirer's page at least
    ACQUIRER_PAGE_PATIENCE ago and is still there, the same status query as the return view
    (hosted_acquirer_return). Money that moved at the acquirer is then recorded before the
    session's expiry, instead of being found only by a late webhook. Returns how many payments
    were asked about."""
    since = (now or timezone.now()) - ACQUIRER_PAGE_PATIENCE
    marker = {"kind": PaymentEvent.Kind.ACQUIRER, "detail__step__in": START_STEPS, "created_at__lte": since,
              f"detail__{ON_ACQUIRER_PAGE}": True}
    # The payments that can be on a page (payment_page_open: few), then narrowed in SQL by the
    # marker; an earlier attempt's marker is told apart below.
    open_ids = sweep_candidates(Payment.objects.filter(status=S.PROCESSING, payment_mode__in=PAGE_MODES,
                                                       acquirer_call_started_at=None))
    candidates = (Payment.objects
                  .filter(Exists(PaymentEvent.objects.filter(payment=OuterRef("pk"), **marker)), pk__in=open_ids,
                          status=S.PROCESSING, acquirer_call_started_at=None)
                  .order_by("pk")[:limit])
    asked = 0
    for payment in candidates:
        if not payment.events.filter(detail__attempt=payment.attempt, **marker).exists():
            continue  # the current attempt was sent away less than the patience ago
        try:
            hosted_acquirer_return(payment=payment)
        except (InvalidTransition, ValidationError):
            continue  # final meanwhile, or being confirmed by the customer's own return
        except Exception:
            logger.exception("asking the acquirer about payment %s on its page failed", payment.pk)
            continue
        asked += 1
    return asked
