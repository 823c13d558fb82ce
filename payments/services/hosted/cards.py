"""Card payments on the hosted page: in the processor's own card fields (CARD_FORM_MODE=processor,
production's default: the card goes from the browser to the processor and never comes here), or
typed into our own form or saved (its token), then the 3-D Secure OTP. A card that does come here
lives only in the call that sends it to the acquirer."""
from __future__ import annotations

import logging
import secrets
from dataclasses import replace

from django.conf import settings
from django.db import transaction
from django.views.decorators.debug import sensitive_variables

from gateway.core.errors import PaymentFailed, ProcessingError, ServiceUnavailable, ValidationError
from gateway.core.transactions import ensure_no_transaction
from payments.acquirer import acquirer_for
from payments.acquirer.base import AcquirerAnswer, AcquirerError, AcquirerRefused, AcquirerUnavailable, Outcome
from payments.services.acquirer_methods import acquirer_for_method
from payments.services.routing import routed_answer, routed_call
from payments.cards import CardInput
from payments.locks import lock_payment
from payments.models import Payment
from payments.services.acquirer_answers import acquirer_answer_record, acquirer_return_url
from payments.services.call_budget import checkout_call_take
from payments.services.hosted.pages import CARD_FIELDS_STEP, ON_ACQUIRER_PAGE, Started, start_answer_record
from payments.services.hosted.session import _ensure_open
from payments.services.hosted.steps import _acquirer_no_answer, _claim, step_answer_apply
from payments.services.transitions import payment_attempt_abandon, payment_attempt_failed, payment_mark_processing
from payments.state import InvalidTransition
from tokens import selectors as token_selectors
from tokens import services as token_services

logger = logging.getLogger("payments.hosted")

S = Payment.Status
M = Payment.Mode


def _authorisation_failed(payment_id: int, exc: AcquirerError) -> Payment:
    """The acquirer did not answer a card authorisation. Nothing is charged before the 3-D
    Secure OTP is verified, so this one is safely a failed attempt (unlike
    _acquirer_no_answer): the customer may try again."""
    logger.warning("acquirer error on payment %s: %s", payment_id, type(exc).__name__)
    return payment_attempt_failed(payment_id=payment_id, reason="the bank could not be reached; no money was taken",
                                  detail={"acquirer_error": type(exc).__name__})


@transaction.atomic(durable=True)
def _card_challenge_record(*, payment_id: int, answer: AcquirerAnswer, issuer: str = "") -> Payment:
    """The acquirer answered CHALLENGE: keep its challenge id, which is what makes the payment
    take an OTP (hosted_card_verify_otp). Not a status change. Changes nothing when the payment
    is no longer a card payment waiting for its challenge (it expired meanwhile)."""
    # Row lock: hosted_card_verify_otp reads the challenge under the same lock, so it sees
    # either no challenge or this one, and never a challenge on a payment that went final.
    payment = lock_payment(payment_id)
    if payment.status != S.PROCESSING or payment.payment_mode != M.CARD or payment.card_challenge_ref:
        return payment
    # A challenge without an id (the sandbox card network's, for saved cards) gets one of ours,
    # so "a challenge was issued" is always a non-empty reference.
    payment.card_challenge_ref = (answer.reference or f"GW3DS-{secrets.token_hex(12)}")[:64]
    payment.card_issuer = issuer or payment.card_issuer
    payment.save(update_fields=["card_challenge_ref", "card_issuer", "updated_at"])
    return payment


def _card_start_abandon(payment_id: int, exc: Exception) -> None:
    """Something broke between PROCESSING and the challenge (the consent record, the acquirer
    call, recording its answer). No challenge was recorded, so no OTP can be taken; end the
    attempt as failed, so the customer may choose again instead of waiting for its expiry.
    Money moves only when an OTP is verified, so none was taken."""
    try:
        payment_attempt_failed(payment_id=payment_id,
                               reason="the card payment could not be started; no money was taken",
                               detail={"error": type(exc).__name__})
    except InvalidTransition:
        pass  # final already
    except Exception:  # noqa: BLE001 - the original error is what the caller must see
        logger.exception("could not fail card payment %s after %s", payment_id, type(exc).__name__)


def card_fields_in_use(payment: Payment) -> bool:
    """Whether this checkout takes cards in the processor's own fields: CARD_FORM_MODE=processor
    and the acquirer its cards would go to (acquirer_for_method: its CARD route) has them
    (Acquirer.card_fields). Then our own card form takes nothing."""
    return settings.CARD_FORM_MODE == "processor" and acquirer_for_method(payment, M.CARD).card_fields() is not None


def hosted_card_fields_open(*, payment: Payment) -> str:
    """The customer pays by card in the processor's own fields. Call it outside any transaction.
    PENDING -> PROCESSING in mode CARD with nothing of the card (it never comes here), committed;
    then, with no lock held, the acquirer opens the attempt (Acquirer.card_fields_open), and its
    answer is recorded as the customer gone to the acquirer's pages (the fields pay, the issuer's
    3-D Secure page follows): the return view and the payments sweep then confirm the attempt by
    the status query, as for any of the acquirer's pages (payments.services.hosted.pages).
    Returns what the fields pay with; it is handed to the page and stored nowhere.
    Raises ValidationError (card) when this checkout takes cards by its own form
    (card_fields_in_use), InvalidTransition when the session is not open, and PaymentFailed,
    ServiceUnavailable or ProcessingError when the acquirer would not open it (the attempt is
    given back: PENDING, not counted as a failure, since no card was sent); CallBudgetSpent
    (payments.services.call_budget) before anything when the checkout has asked too often."""
    ensure_no_transaction()
    if not card_fields_in_use(payment):
        raise ValidationError("this checkout takes cards in its own form", field="card")
    _ensure_open(payment)  # first: a stale tab's Pay goes on to where the payment is, spending nothing
    checkout_call_take(payment, new_attempt=True)
    payment = payment_mark_processing(payment_id=payment.pk, payment_mode=M.CARD,
                                      detail={"method": "CARD", "via": "card fields"})
    payment = Payment.objects.select_related("merchant").get(pk=payment.pk)
    # The fields on the page are this acquirer's (render_methods drew them by the same rule):
    # the attempt goes there, with no failover, which would hand its script another's order.
    try:
        answer = routed_answer(routed_call(
            payment, M.CARD, lambda acquirer: acquirer.card_fields_open(
                payment=payment, return_url=acquirer_return_url(payment)),
            step=CARD_FIELDS_STEP, bound_to=acquirer_for_method(payment, M.CARD).name))
    except AcquirerError as exc:
        logger.warning("acquirer did not open card fields for payment %s: %s", payment.sabpaisa_txn_id,
                       type(exc).__name__)
        payment_attempt_abandon(payment_id=payment.pk, modes=(M.CARD,), reason="the card fields could not be opened")
        if isinstance(exc, AcquirerRefused):
            raise PaymentFailed() from None
        raise (ServiceUnavailable if isinstance(exc, AcquirerUnavailable) else ProcessingError)() from None
    # The session is a bearer for paying the order: not kept in the story.
    acquirer_answer_record(payment_id=payment.pk, step=CARD_FIELDS_STEP, attempt=payment.attempt,
                           answer=replace(answer, reference="", raw={**answer.raw, ON_ACQUIRER_PAGE: True}))
    return answer.reference


@sensitive_variables("card")
def hosted_card_start(*, payment: Payment, card: CardInput, save_card: bool = False) -> Started:
    """Start a card payment. PENDING -> PROCESSING (last 4 and network kept, nothing else of
    the card), then the acquirer: a 3-D Secure challenge is recorded (card_challenge_ref) and
    leaves it PROCESSING for hosted_card_verify_otp; a decline is a failed attempt
    (payment_attempt_failed: back to PENDING, or FAILED at the last one). Until the challenge
    is recorded no OTP is taken, and should anything fail before then the attempt fails. The card itself lives only in this call. `save_card` (staging only): the
    customer consented to save the card, recorded with the card's expiry for the token
    (tokens.services.card_consent_record).
    Returns the payment and, when the acquirer's challenge is on the issuer's own page, its
    address (the customer is sent there and comes back to hosted_acquirer_return).
    Raises InvalidTransition when the session is no longer open, ValidationError (card_number)
    in CARD_FORM_MODE=processor, where no card number may come here (hosted_card_fields_open)."""
    if settings.CARD_FORM_MODE == "processor":
        raise ValidationError("cards are taken in the card network's own fields here, not by this form",
                              field="card_number")
    _ensure_open(payment)
    payment = payment_mark_processing(
        payment_id=payment.pk, payment_mode=M.CARD, card_last4=card.last4, card_network=card.network,
        detail={"method": "CARD", "last4": card.last4, "network": card.network,
                **({"save_card": True} if save_card else {})},
    )
    try:
        if save_card:
            token_services.card_consent_record(payment_pk=payment.pk, merchant_name=payment.merchant.name,
                                               expiry_month=card.expiry_month, expiry_year=card.expiry_year)
        elif payment.attempt > 1:
            token_services.card_consent_forget(payment_pk=payment.pk)  # an earlier attempt's card
        try:
            answer = routed_answer(routed_call(
                payment, "CARD", lambda acquirer: acquirer.card_authorize(
                    payment=payment, card=card, return_url=acquirer_return_url(payment)), step="card_authorize"))
        except AcquirerError as exc:
            return Started(_authorisation_failed(payment.pk, exc))
        start_answer_record(payment=payment, step="card_authorize", answer=answer)
        issuer = (answer.issuer or "")[:60]
        if answer.outcome == Outcome.CHALLENGE:
            challenged = _card_challenge_record(payment_id=payment.pk, answer=answer, issuer=issuer)
            on_page = challenged.card_challenge_ref and challenged.status == S.PROCESSING
            return Started(challenged, answer.link if on_page else "")
        return Started(payment_attempt_failed(payment_id=payment.pk, reason=answer.message or "declined by the issuer",
                                              attempt=payment.attempt, detail={"issuer": issuer}))
    except InvalidTransition:
        raise  # it went final meanwhile (expired): that stands
    except Exception as exc:
        _card_start_abandon(payment.pk, exc)
        raise


@sensitive_variables("card")
def hosted_card_pay(*, payment: Payment, card: CardInput, save_card: bool = False) -> Payment:
    """hosted_card_start, for a caller that needs the payment only."""
    return hosted_card_start(payment=payment, card=card, save_card=save_card).payment


@sensitive_variables("cvv")
def hosted_saved_card_pay(*, payment: Payment, cvv: str) -> Payment:
    """Pay a session created with `tokenId` with its saved card: the customer still types the
    CVV (in memory only) and then answers the same 3-D Secure challenge as for a typed card
    (hosted_card_verify_otp). PENDING -> PROCESSING with the token's last 4, network and
    issuer; the card network declines a token deleted meanwhile (a failed attempt).
    Raises InvalidTransition when the session is no longer open, ValidationError naming
    tokenId when its token can no longer pay (deleted, expired), FeatureNotAvailable in
    production."""
    _ensure_open(payment)
    token = token_selectors.token_usable_for_payment(payment_pk=payment.pk, merchant_id=payment.merchant_id)
    payment = payment_mark_processing(
        payment_id=payment.pk, payment_mode=M.CARD, card_last4=token.last4, card_network=token.network,
        card_issuer=token.issuer[:60],
        detail={"method": "CARD", "tokenId": token.token_id, "last4": token.last4, "network": token.network},
    )
    try:
        try:
            said = token_services.token_authorize(token=token, amount=payment.amount, cvv=cvv)
            # The network's answer is recorded and applied as the acquirer's would be.
            answer = AcquirerAnswer(Outcome(said.outcome.value), message=said.message, issuer=said.issuer,
                                    raw=said.raw)
        except AcquirerError as exc:
            return _authorisation_failed(payment.pk, exc)
        acquirer_answer_record(payment_id=payment.pk, step="token_authorize", answer=answer, attempt=payment.attempt)
        if answer.outcome == Outcome.CHALLENGE:
            return _card_challenge_record(payment_id=payment.pk, answer=answer)
        return payment_attempt_failed(payment_id=payment.pk, reason=answer.message or "declined by the card network",
                                      attempt=payment.attempt)
    except InvalidTransition:
        raise
    except Exception as exc:
        _card_start_abandon(payment.pk, exc)
        raise


def hosted_card_verify_otp(*, payment: Payment, otp: str) -> Payment:
    """Finish the 3-D Secure challenge: the right OTP makes the payment SUCCESS (with its bank
    reference), any other fails the attempt (one OTP per challenge; a new attempt is a new
    challenge, and the third failed attempt ends the payment), so an OTP cannot be guessed. Only a payment whose challenge the acquirer issued takes an OTP (checked under the
    row lock), and the OTP goes to the acquirer with that challenge. One submission at a time
    reaches the acquirer, and none once the payment is final.
    Raises InvalidTransition when the payment is not waiting for an OTP, ValidationError (otp)
    while its challenge has not been issued or another OTP of it is being checked,
    ServiceUnavailable (otp) when the acquirer did not answer (the payment stays PROCESSING)."""
    payment = _claim(payment, modes=(M.CARD,), target=S.SUCCESS, field="otp", challenge=True)
    try:
        answer = acquirer_for(payment).card_verify_otp(payment=payment, otp=otp, challenge_ref=payment.card_challenge_ref)
    except AcquirerError as exc:
        _acquirer_no_answer(payment.pk, "card_verify_otp", exc, field="otp")
    return step_answer_apply(payment, "card_verify_otp", answer)
