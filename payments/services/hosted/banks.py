"""Methods paid at the customer's bank: net banking and wallets (the bank's page answers at
once), and NEFT, RTGS and cash challans (open until the funds arrive quoting a reference)."""
from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone

from gateway.core.errors import NotFound, ValidationError
from gateway.core.ids import random_string
from payments.acquirer import acquirer_for
from payments.acquirer.base import AcquirerError, Outcome
from payments.services.routing import routed_answer, routed_call
from payments.models import Payment
from payments.services.acquirer_answers import acquirer_return_url
from payments.services.call_budget import answer_keep, answer_kept, checkout_call_take
from payments.services.hosted.pages import Started, start_answer_record
from payments.services.hosted.session import _ensure_open
from payments.services.hosted.steps import _acquirer_no_answer, _claim, acquirer_call_release, step_answer_apply
from payments.services.transitions import payment_attempt_failed, payment_mark_processing
from payments.state import InvalidTransition

logger = logging.getLogger("payments.hosted")

S = Payment.Status
M = Payment.Mode

# NEFT, RTGS and cash challans stay open this long after the customer picks them: long enough
# for a transfer made on a Friday evening to arrive after a bank holiday Monday.
TRANSFER_VALIDITY = timedelta(hours=72)
TRANSFER_MODES = (M.NEFT, M.RTGS, M.CHALLAN)
BANK_MODES = (M.NB, M.WALLET)

# --- Net banking and wallets --------------------------------------------------------------

def hosted_bank_start(*, payment: Payment, mode: str, bank_code: str) -> Payment:
    """The customer picked a bank (NB) or wallet (WALLET): PENDING -> PROCESSING until the
    bank's page answers (hosted_bank_complete). Raises InvalidTransition when not open."""
    if mode not in BANK_MODES:
        raise ValueError(f"{mode} is not net banking or a wallet")
    _ensure_open(payment)
    return payment_mark_processing(payment_id=payment.pk, payment_mode=mode, bank_code=bank_code,
                                   detail={"method": mode, "bank": bank_code})


def hosted_bank_open(*, payment: Payment, mode: str, bank_code: str) -> Started:
    """hosted_bank_start, then the acquirer's bank_redirect: with a link, the bank's or wallet's
    own page to send the customer to (its answer, the customer back, is confirmed by
    hosted_acquirer_return); without, the checkout's own bank page (hosted_bank_complete). The
    acquirer declining, or not reachable, is a failed attempt: no money moved before the
    customer reached the bank's page. Raises InvalidTransition when the session is not open,
    CallBudgetSpent (payments.services.call_budget) before anything when the checkout has
    asked the acquirer too often."""
    checkout_call_take(payment, new_attempt=True)
    payment = hosted_bank_start(payment=payment, mode=mode, bank_code=bank_code)
    try:
        answer = routed_answer(routed_call(
            payment, mode, lambda acquirer: acquirer.bank_redirect(
                payment=payment, mode=mode, bank_code=bank_code, return_url=acquirer_return_url(payment)),
            step="bank_redirect"))
    except AcquirerError as exc:
        return Started(_start_failed(payment, exc))
    if answer.outcome == Outcome.PENDING and not answer.link:
        return Started(payment)  # the checkout's own bank page: nothing to record yet
    start_answer_record(payment=payment, step="bank_redirect", answer=answer)
    if answer.outcome == Outcome.PENDING:
        return Started(payment, answer.link)
    return Started(payment_attempt_failed(payment_id=payment.pk, reason=answer.message or "declined at the bank",
                                          attempt=payment.attempt))


def _start_failed(payment: Payment, exc: AcquirerError) -> Payment:
    """The acquirer could not start the method (before any money could move): a failed attempt."""
    logger.warning("acquirer error starting %s of payment %s: %s", payment.payment_mode, payment.pk,
                   type(exc).__name__)
    return payment_attempt_failed(payment_id=payment.pk, reason="the bank could not be reached; no money was taken",
                                  attempt=payment.attempt, detail={"acquirer_error": type(exc).__name__})


def hosted_bank_complete(*, payment: Payment, approved: bool) -> Payment:
    """The bank's or wallet's page answered: SUCCESS with its reference, or FAILED. One answer
    at a time reaches the acquirer, and none once the payment is final.
    Raises InvalidTransition when the payment is not waiting for that page, ValidationError
    (decision) while another answer of it is being confirmed, ServiceUnavailable (decision)
    when the acquirer did not answer (the payment stays PROCESSING)."""
    payment = _claim(payment, modes=BANK_MODES, target=S.SUCCESS if approved else S.FAILED, field="decision")
    try:
        answer = acquirer_for(payment).bank_authorize(payment=payment, bank_code=payment.bank_code, approved=approved)
    except AcquirerError as exc:
        _acquirer_no_answer(payment.pk, "bank_authorize", exc, field="decision")
    return step_answer_apply(payment, "bank_authorize", answer)


# --- NEFT, RTGS and cash challan ----------------------------------------------------------

def new_transfer_reference() -> str:
    """'GW' and 12 digits: short enough to write on a cash challan, and the tail of the virtual
    account number. Unique (constraint payment_unique_transfer_reference)."""
    return "GW" + random_string("0123456789", 12)


# The question, in the checkout's kept answers (payments.services.call_budget), of the account
# a transfer attempt pays into.
TRANSFER_ACCOUNT = "transfer_account"


def transfer_details(payment: Payment) -> dict:
    """What the challan shows: where to pay (the acquirer's account for the payment,
    Acquirer.transfer_details), the reference to quote, and until when. The account is the
    one the acquirer gave for this attempt a moment ago when it is kept (each view of the
    challan would otherwise ask again), else asked: a call of the checkout's budget. Raises
    AcquirerError when the acquirer could not say, CallBudgetSpent past the budget."""
    account = answer_kept(payment, TRANSFER_ACCOUNT, lambda: acquirer_for(payment).transfer_details(
        payment=payment, return_url=acquirer_return_url(payment)))
    return {
        "beneficiary": account.beneficiary,
        "bank": account.bank,
        "branch": account.branch,
        "ifsc": account.ifsc,
        "account": account.account,
        "reference": payment.transfer_reference,
        "valid_until": payment.expires_at,
    }


def hosted_transfer_start(*, payment: Payment, mode: str) -> Payment:
    """The customer picked NEFT, RTGS or a cash challan: PENDING -> PROCESSING with a unique
    reference, open for TRANSFER_VALIDITY (the session's deadline is extended). The payment
    stays PROCESSING until the funds arrive (hosted_transfer_received) or it expires (the
    beat sweep; a queued task would outlive Redis's visibility timeout). An acquirer that
    cannot give the account to pay into (transfer_details) fails the attempt instead.
    Raises InvalidTransition when the session is no longer open, CallBudgetSpent before
    anything when the checkout has asked the acquirer too often."""
    if mode not in TRANSFER_MODES:
        raise ValueError(f"{mode} is not a bank transfer")
    _ensure_open(payment)
    checkout_call_take(payment, new_attempt=True)
    payment = payment_mark_processing(
        payment_id=payment.pk, payment_mode=mode, transfer_reference=new_transfer_reference(),
        expires_at=timezone.now() + TRANSFER_VALIDITY, detail={"method": mode},
    )
    try:
        # The account is asked for now, so an acquirer that cannot give one fails the attempt
        # here rather than leave it open for days with nowhere to pay; the challan that follows
        # shows this answer (transfer_details).
        account = acquirer_for(payment).transfer_details(payment=payment, return_url=acquirer_return_url(payment))
    except AcquirerError as exc:
        try:
            return _start_failed(payment, exc)
        except InvalidTransition:
            pass  # final meanwhile
        return payment
    answer_keep(payment, TRANSFER_ACCOUNT, account)
    return payment


def hosted_transfer_received(*, reference: str) -> Payment:
    """Funds arrived quoting `reference` (in staging: the tester says so on /sandbox/transfers).
    PROCESSING -> SUCCESS with the bank's reference; the same funds reported twice are
    confirmed with the bank once. Raises NotFound for an unknown reference, InvalidTransition
    when the payment is final already (paid, or expired unpaid), ValidationError (reference)
    while the same transfer is being confirmed or when the bank could not confirm it."""
    payment = (Payment.objects.select_related("merchant")
               .filter(transfer_reference=reference.strip().upper(), payment_mode__in=TRANSFER_MODES).first())
    if payment is None:
        raise NotFound("no open transfer has that reference")
    payment = _claim(payment, modes=TRANSFER_MODES, target=S.SUCCESS, field="reference")
    try:
        answer = acquirer_for(payment).transfer_received(payment=payment, amount=payment.amount)
    except AcquirerError as exc:
        # Funds that could not be matched stay with the bank; the payment stays open.
        acquirer_call_release(payment.pk)
        raise ValidationError("the bank could not confirm the transfer; try again", field="reference") from exc
    applied = step_answer_apply(payment, "transfer_received", answer)
    if applied is None:
        raise ValidationError("the bank could not confirm the transfer; try again", field="reference")
    return applied
