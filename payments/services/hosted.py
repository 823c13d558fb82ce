"""Hosted checkout: the session the merchant creates and what the customer does on the page.

Status changes go through payments.services.transitions only. The acquirer is never called
with a row lock held: each method first moves the payment to PROCESSING (its own committed
transaction, which also stops a second submission of the same session), then calls the
acquirer, then records the answer with another transition. Finishing a method (OTP, bank page,
funds arriving) claims its one acquirer call in the database first; an acquirer that does not
answer that call leaves the payment PROCESSING, since only a definite decline is a failure.

UPI on the page is payments.services.upi (shared with S2S); this module covers the session,
cards, net banking, wallets, bank transfers (NEFT, RTGS, cash challan) and the return redirect.
"""
from __future__ import annotations

import hashlib
import logging
import secrets
import time
from dataclasses import dataclass
from typing import NoReturn
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.functions import Now
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from gateway import sql
from gateway.errors import DuplicateTransaction, NotFound, ServiceUnavailable, ValidationError
from gateway.ids import random_string
from gateway.models import Merchant
from gateway.signing import return_signature
from payments.acquirer import get_acquirer
from payments.acquirer.base import AcquirerAnswer, AcquirerError, Outcome
from payments.cards import CardInput
from payments.locks import lock_payment
from payments.models import Payment, PaymentEvent
from payments.services.acquirer_answers import acquirer_answer_record, acquirer_approval_refused
from payments.services.transitions import (
    payment_expire,
    payment_mark_failed,
    payment_mark_processing,
    payment_mark_succeeded,
    payment_note,
)
from payments.state import InvalidTransition
from tokens import selectors as token_selectors
from tokens import services as token_services
from tokens.models import Token

logger = logging.getLogger("payments.hosted")

S = Payment.Status
M = Payment.Mode

# NEFT, RTGS and cash challans stay open this long after the customer picks them: long enough
# for a transfer made on a Friday evening to arrive after a bank holiday Monday.
TRANSFER_VALIDITY = timedelta(hours=72)
TRANSFER_MODES = (M.NEFT, M.RTGS, M.CHALLAN)
BANK_MODES = (M.NB, M.WALLET)

# Where transfers are paid. The sandbox acquirer's collection account; a real acquirer gives
# its own (a virtual account per payment, so funds are matched without the customer's help).
TRANSFER_BENEFICIARY = {
    "name": "Gateway Collections Escrow",
    "bank": "Sandbox Escrow Bank",
    "ifsc": "SBXG0000001",
    "branch": "Mumbai Fort",
    "account_prefix": "222333",
}


def client_secret_hash(client_secret: str) -> str:
    return hashlib.sha256(client_secret.encode()).hexdigest()


def checkout_url(payment: Payment) -> str:
    """GATEWAY_PUBLIC_URL + the page's path, with no query string: clients append
    ?clientSecret=... themselves (CONTRACT.md)."""
    return settings.GATEWAY_PUBLIC_URL + reverse("checkout:page", args=[payment.payment_id])


@dataclass(frozen=True)
class HostedSession:
    payment: Payment
    client_secret: str  # shown once, in the creation response; only its hash is stored

    @property
    def checkout_url(self) -> str:
        return checkout_url(self.payment)


def hosted_payment_create(*, merchant: Merchant, merchant_txn_id: str, amount: int, currency: str,
                          return_url: str, customer_name: str = "", customer_email: str = "",
                          customer_phone: str = "", description: str = "", metadata: dict | None = None,
                          udf: dict | None = None, token: Token | None = None) -> HostedSession:
    """Open a checkout session: a PENDING hosted payment that expires after
    CHECKOUT_SESSION_TTL_SECONDS (the expiry sweep ends it then; payments.services.expiry). With `token`
    (from tokens.selectors.token_get_usable) the checkout offers that saved card.
    Raises DuplicateTransaction when the merchant already used `merchant_txn_id` (in either
    flow), which the database constraint payment_unique_merchant_txn guarantees."""
    client_secret = secrets.token_urlsafe(32)  # [A-Za-z0-9_-]: safe to append to a URL unencoded
    payment = Payment(
        merchant=merchant, flow=Payment.Flow.HOSTED, status=S.PENDING,
        merchant_txn_id=merchant_txn_id, amount=amount, currency=currency, return_url=return_url,
        customer_name=customer_name, customer_email=customer_email, customer_phone=customer_phone,
        description=description, metadata=metadata or {}, udf=udf or {},
        client_secret_hash=client_secret_hash(client_secret),
        expires_at=timezone.now() + timedelta(seconds=settings.CHECKOUT_SESSION_TTL_SECONDS),
    )
    event = PaymentEvent(payment=payment, kind=PaymentEvent.Kind.STATUS, to_status=S.PENDING,
                         detail={"reason": "checkout session created",
                                 **({"tokenId": token.token_id} if token else {})})
    try:
        if token is None and not transaction.get_connection().in_atomic_block:
            # The API's hottest write: the payment and its event in one statement, atomic by
            # itself, so no BEGIN and COMMIT either (gateway/sql.py).
            sql.insert_with_children(payment, [event], link="payment")
        else:
            # With a token, its link commits with the payment. Inside a caller's transaction
            # this is a savepoint, so that transaction survives a duplicate.
            with transaction.atomic():
                sql.insert_with_children(payment, [event], link="payment")
                if token is not None:
                    token_services.token_payment_link(token=token, payment=payment)
    except IntegrityError as exc:
        if _is_duplicate_txn(exc):
            raise DuplicateTransaction(f"merchantTxnId {merchant_txn_id!r} has already been used") from None
        raise
    return HostedSession(payment, client_secret)


def _is_duplicate_txn(exc: IntegrityError) -> bool:
    diag = getattr(getattr(exc, "__cause__", None), "diag", None)
    if diag is not None and getattr(diag, "constraint_name", None):
        return diag.constraint_name == "payment_unique_merchant_txn"
    # SQLite names the columns instead of the constraint.
    text = str(exc)
    return "payment_unique_merchant_txn" in text or "payments_payment.merchant_txn_id" in text


def hosted_expire_if_due(payment: Payment) -> Payment:
    """The page itself expires a session whose time is up, so a customer never pays into one
    the sweep has not reached yet. Returns the payment as it now is."""
    if not payment.is_final and payment.expires_at <= timezone.now():
        payment_expire(payment_id=payment.pk)
        payment.refresh_from_db()
    return payment


def _ensure_open(payment: Payment) -> None:
    """A method may start only on a PENDING session whose time is not up."""
    hosted_expire_if_due(payment)
    if payment.status != S.PENDING:
        raise InvalidTransition(payment.status, S.PROCESSING)


def _authorisation_failed(payment_id: int, exc: AcquirerError) -> Payment:
    """The acquirer did not answer a card authorisation. Nothing is charged before the 3-D
    Secure OTP is verified, so this one is safely FAILED (unlike _acquirer_no_answer)."""
    logger.warning("acquirer error on payment %s: %s", payment_id, type(exc).__name__)
    return payment_mark_failed(payment_id=payment_id, reason="the bank could not be reached; no money was taken",
                               detail={"acquirer_error": type(exc).__name__})


# --- One acquirer call per step ----------------------------------------------------------
#
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
    transfer_received), recorded as `recorded_as` (default: the step) and applied: SUCCESS or
    FAILED (_acquirer_answer_apply). A transfer the bank could not confirm is no decline: its
    funds stay with the bank, the answer is recorded, the claim given back and None returned
    (the payment stays open). Raises InvalidTransition as _acquirer_answer_apply does."""
    recorded_as = recorded_as or step
    if step == "transfer_received" and answer.outcome != Outcome.APPROVED:
        acquirer_answer_record(payment_id=payment.pk, step=recorded_as, answer=answer)
        acquirer_call_release(payment.pk)
        return None
    return _acquirer_answer_apply(payment, recorded_as, answer, declined=_DECLINED.get(step, ""))


def _acquirer_answer_apply(payment: Payment, step: str, answer: AcquirerAnswer, *, declined: str) -> Payment:
    """Record the acquirer's final answer to a claimed call: APPROVED makes the payment
    SUCCESS with its RRN, anything else FAILED. An approval that finds the payment final
    already (it expired during the call) is kept with its RRN for reversal, then
    InvalidTransition is raised as for any late answer."""
    acquirer_answer_record(payment_id=payment.pk, step=step, answer=answer)
    if answer.outcome == Outcome.APPROVED:
        try:
            return payment_mark_succeeded(payment_id=payment.pk, bank_rrn=answer.reference,
                                          acquirer_call_started_at=None)
        except InvalidTransition:
            acquirer_approval_refused(payment_id=payment.pk, step=step, bank_rrn=answer.reference)
            raise
    return payment_mark_failed(payment_id=payment.pk, reason=answer.message or declined,
                               acquirer_call_started_at=None)


# --- Cards --------------------------------------------------------------------------------

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
    call, recording its answer). No challenge was recorded, so no OTP can be taken; make the
    payment FAILED too, so the customer goes back to the merchant instead of waiting for its
    expiry. Money moves only when an OTP is verified, so none was taken."""
    try:
        payment_mark_failed(payment_id=payment_id, reason="the card payment could not be started; no money was taken",
                            detail={"error": type(exc).__name__})
    except InvalidTransition:
        pass  # final already
    except Exception:  # noqa: BLE001 - the original error is what the caller must see
        logger.exception("could not fail card payment %s after %s", payment_id, type(exc).__name__)


@sensitive_variables("card")
def hosted_card_pay(*, payment: Payment, card: CardInput, save_card: bool = False) -> Payment:
    """Start a card payment. PENDING -> PROCESSING (last 4 and network kept, nothing else of
    the card), then the acquirer: a 3-D Secure challenge is recorded (card_challenge_ref) and
    leaves it PROCESSING for hosted_card_verify_otp; a decline makes it FAILED. Until the
    challenge is recorded no OTP is taken, and should anything fail before then the payment
    becomes FAILED. The card itself lives only in this call. `save_card` (staging only): the
    customer consented to save the card, recorded with the card's expiry for the token
    (tokens.services.card_consent_record).
    Raises InvalidTransition when the session is no longer open."""
    _ensure_open(payment)
    payment = payment_mark_processing(
        payment_id=payment.pk, payment_mode=M.CARD, card_last4=card.last4, card_network=card.network,
        detail={"method": "CARD", "last4": card.last4, "network": card.network,
                **({"save_card": True} if save_card else {})},
    )
    try:
        if save_card:
            token_services.card_consent_record(payment=payment, expiry_month=card.expiry_month,
                                               expiry_year=card.expiry_year)
        try:
            answer = get_acquirer().card_authorize(payment=payment, card=card)
        except AcquirerError as exc:
            return _authorisation_failed(payment.pk, exc)
        acquirer_answer_record(payment_id=payment.pk, step="card_authorize", answer=answer)
        issuer = (answer.issuer or "")[:60]
        if answer.outcome == Outcome.CHALLENGE:
            return _card_challenge_record(payment_id=payment.pk, answer=answer, issuer=issuer)
        return payment_mark_failed(payment_id=payment.pk, reason=answer.message or "declined by the issuer",
                                   card_issuer=issuer)
    except InvalidTransition:
        raise  # it went final meanwhile (expired): that stands
    except Exception as exc:
        _card_start_abandon(payment.pk, exc)
        raise


@sensitive_variables("cvv")
def hosted_saved_card_pay(*, payment: Payment, cvv: str) -> Payment:
    """Pay a session created with `tokenId` with its saved card: the customer still types the
    CVV (in memory only) and then answers the same 3-D Secure challenge as for a typed card
    (hosted_card_verify_otp). PENDING -> PROCESSING with the token's last 4, network and
    issuer; the card network declines a token deleted meanwhile (FAILED).
    Raises InvalidTransition when the session is no longer open, ValidationError naming
    tokenId when its token can no longer pay (deleted, expired), FeatureNotAvailable in
    production."""
    _ensure_open(payment)
    token = token_selectors.token_usable_for_payment(payment=payment)
    payment = payment_mark_processing(
        payment_id=payment.pk, payment_mode=M.CARD, card_last4=token.last4, card_network=token.network,
        card_issuer=token.issuer[:60],
        detail={"method": "CARD", "tokenId": token.token_id, "last4": token.last4, "network": token.network},
    )
    try:
        try:
            answer = token_services.token_authorize(token=token, payment=payment, cvv=cvv)
        except AcquirerError as exc:
            return _authorisation_failed(payment.pk, exc)
        acquirer_answer_record(payment_id=payment.pk, step="token_authorize", answer=answer)
        if answer.outcome == Outcome.CHALLENGE:
            return _card_challenge_record(payment_id=payment.pk, answer=answer)
        return payment_mark_failed(payment_id=payment.pk, reason=answer.message or "declined by the card network")
    except InvalidTransition:
        raise
    except Exception as exc:
        _card_start_abandon(payment.pk, exc)
        raise


def hosted_card_verify_otp(*, payment: Payment, otp: str) -> Payment:
    """Finish the 3-D Secure challenge: the right OTP makes the payment SUCCESS (with its bank
    reference), any other makes it FAILED (one attempt, CONTRACT.md), so an OTP cannot be
    guessed. Only a payment whose challenge the acquirer issued takes an OTP (checked under the
    row lock), and the OTP goes to the acquirer with that challenge. One submission at a time
    reaches the acquirer, and none once the payment is final.
    Raises InvalidTransition when the payment is not waiting for an OTP, ValidationError (otp)
    while its challenge has not been issued or another OTP of it is being checked,
    ServiceUnavailable (otp) when the acquirer did not answer (the payment stays PROCESSING)."""
    payment = _claim(payment, modes=(M.CARD,), target=S.SUCCESS, field="otp", challenge=True)
    try:
        answer = get_acquirer().card_verify_otp(payment=payment, otp=otp, challenge_ref=payment.card_challenge_ref)
    except AcquirerError as exc:
        _acquirer_no_answer(payment.pk, "card_verify_otp", exc, field="otp")
    return step_answer_apply(payment, "card_verify_otp", answer)


# --- Net banking and wallets --------------------------------------------------------------

def hosted_bank_start(*, payment: Payment, mode: str, bank_code: str) -> Payment:
    """The customer picked a bank (NB) or wallet (WALLET): PENDING -> PROCESSING until the
    bank's page answers (hosted_bank_complete). Raises InvalidTransition when not open."""
    if mode not in BANK_MODES:
        raise ValueError(f"{mode} is not net banking or a wallet")
    _ensure_open(payment)
    return payment_mark_processing(payment_id=payment.pk, payment_mode=mode, bank_code=bank_code,
                                   detail={"method": mode, "bank": bank_code})


def hosted_bank_complete(*, payment: Payment, approved: bool) -> Payment:
    """The bank's or wallet's page answered: SUCCESS with its reference, or FAILED. One answer
    at a time reaches the acquirer, and none once the payment is final.
    Raises InvalidTransition when the payment is not waiting for that page, ValidationError
    (decision) while another answer of it is being confirmed, ServiceUnavailable (decision)
    when the acquirer did not answer (the payment stays PROCESSING)."""
    payment = _claim(payment, modes=BANK_MODES, target=S.SUCCESS if approved else S.FAILED, field="decision")
    try:
        answer = get_acquirer().bank_authorize(payment=payment, bank_code=payment.bank_code, approved=approved)
    except AcquirerError as exc:
        _acquirer_no_answer(payment.pk, "bank_authorize", exc, field="decision")
    return step_answer_apply(payment, "bank_authorize", answer)


# --- NEFT, RTGS and cash challan ----------------------------------------------------------

def new_transfer_reference() -> str:
    """'GW' and 12 digits: short enough to write on a cash challan, and the tail of the virtual
    account number. Unique (constraint payment_unique_transfer_reference)."""
    return "GW" + random_string("0123456789", 12)


def transfer_details(payment: Payment) -> dict:
    """What the challan shows: where to pay, the reference to quote, and until when."""
    reference = payment.transfer_reference
    return {
        "beneficiary": TRANSFER_BENEFICIARY["name"],
        "bank": TRANSFER_BENEFICIARY["bank"],
        "branch": TRANSFER_BENEFICIARY["branch"],
        "ifsc": TRANSFER_BENEFICIARY["ifsc"],
        "account": TRANSFER_BENEFICIARY["account_prefix"] + reference[2:],
        "reference": reference,
        "valid_until": payment.expires_at,
    }


def hosted_transfer_start(*, payment: Payment, mode: str) -> Payment:
    """The customer picked NEFT, RTGS or a cash challan: PENDING -> PROCESSING with a unique
    reference, open for TRANSFER_VALIDITY (the session's deadline is extended). The payment
    stays PROCESSING until the funds arrive (hosted_transfer_received) or it expires (the
    beat sweep; a queued task would outlive Redis's visibility timeout).
    Raises InvalidTransition when the session is no longer open."""
    if mode not in TRANSFER_MODES:
        raise ValueError(f"{mode} is not a bank transfer")
    _ensure_open(payment)
    return payment_mark_processing(
        payment_id=payment.pk, payment_mode=mode, transfer_reference=new_transfer_reference(),
        expires_at=timezone.now() + TRANSFER_VALIDITY, detail={"method": mode},
    )


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
        answer = get_acquirer().transfer_received(payment=payment, amount=payment.amount)
    except AcquirerError as exc:
        # Funds that could not be matched stay with the bank; the payment stays open.
        acquirer_call_release(payment.pk)
        raise ValidationError("the bank could not confirm the transfer; try again", field="reference") from exc
    applied = step_answer_apply(payment, "transfer_received", answer)
    if applied is None:
        raise ValidationError("the bank could not confirm the transfer; try again", field="reference")
    return applied


# --- Leaving the page ---------------------------------------------------------------------

def hosted_cancel(*, payment: Payment) -> Payment:
    """The customer gave up before choosing a method: PENDING -> FAILED ("cancelled by the
    customer"), final like any failure. A session whose time was already up is EXPIRED, as any
    other action would find it. Raises InvalidTransition once a method is in flight or the
    session is final."""
    hosted_expire_if_due(payment)
    if payment.status != S.PENDING:
        raise InvalidTransition(payment.status, S.FAILED)
    return payment_mark_failed(payment_id=payment.pk, reason="cancelled by the customer",
                               detail={"reason": "cancelled by the customer"})


def return_params(payment: Payment, *, now: float | None = None) -> dict:
    """The gateway's own parameters of the return redirect (CONTRACT.md), amounts in paise."""
    return {
        "transaction_id": payment.sabpaisa_txn_id,
        "merchant_txn_id": payment.merchant_txn_id,
        "status": payment.status,
        "amount": str(payment.amount),
        "paid_amount": str(payment.paid_amount or 0),
        "payment_mode": payment.payment_mode or "",
        "timestamp": str(int(time.time() if now is None else now)),
    }


def hosted_return_url(payment: Payment, *, now: float | None = None) -> str:
    """returnUrl with the result added and signed. The signature covers the final set of query
    parameters, the merchant's own included, exactly as the merchant will read them
    (request.GET.dict(): decoded, the last of a repeated key). Ours win over a merchant
    parameter of the same name, and a repeated key is sent once, so what is signed is what
    arrives. Only for a final payment."""
    if not payment.is_final:
        raise InvalidTransition(payment.status, "redirect")
    parts = urlsplit(payment.return_url)
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    params.pop("signature", None)
    params.update(return_params(payment, now=now))
    params["signature"] = return_signature(payment.merchant.secret_key, params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", urlencode(params), parts.fragment))


def hosted_redirect(payment: Payment) -> str:
    """The address to send the customer to now, with the redirect recorded in the payment's story."""
    url = hosted_return_url(payment)
    parts = urlsplit(payment.return_url)
    payment_note(payment_id=payment.pk, kind=PaymentEvent.Kind.REDIRECT,
                 detail={"status": payment.status, "to": f"{parts.scheme}://{parts.netloc}{parts.path}"})
    return url
