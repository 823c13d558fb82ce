"""Every write of the tokenisation beta: the customer's consent on the checkout, token creation
from a consenting payment, deletion, and paying a session with a token.

tokens stands below payments and imports nothing of it: payments hands over what a token needs
of a payment as plain values (PaidCard, a payment's primary key, an amount), and checks the
payment's own side first (payments.services.card_tokens).

The network (tokens.network) is never called with a row lock held: creation asks the network
first and then stores the token under the consent's lock (handing a surplus reference back
when another request won the race); deletion deletes in the vault, commits, then tells the
network. The vault is what decides whether a token may pay.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from gateway.core.errors import NotFound, ValidationError
from gateway.platform.services import audit_record
from tokens.locks import lock_card_consent, lock_token
from tokens.models import CardConsent, Token, TokenPayment
from tokens.network import NetworkAnswer, NetworkRefused, NetworkToken, get_network
from tokens.selectors import card_expired, ensure_tokens_available

# A consent becomes a token within this time of its payment's success, or not at all (the
# card's expiry, kept only for the token, is then forgotten by card_consents_purge).
TOKEN_CONSENT_WINDOW = timedelta(days=7)
CONSENT_TEXT_MAX = 1000
# A payment in one of these statuses ended without success (FAILED, EXPIRED) or is open again
# after its card attempt failed (PENDING): its consent can no longer become a token. Payment
# statuses, named here rather than imported (tokens stands below payments); a test in
# tests/tokens holds them to payments.models.Payment.Status.
PAYMENT_STATUSES_WITHOUT_TOKEN = ("FAILED", "EXPIRED", "PENDING")


def card_consent_text(merchant_name: str) -> str:
    """The consent the checkout's `save_card` checkbox shows, recorded word for word."""
    return (f"Save this card with {merchant_name} for faster checkout. The card network replaces my card "
            f"number with a token, kept by the payment gateway for {merchant_name} only; my card number and "
            f"CVV are not stored. Each payment with the saved card still asks for my CVV and a one-time "
            f"password, and I can ask {merchant_name} to delete it at any time.")


# --- consent on the checkout --------------------------------------------------------------

def card_consent_record(*, payment_pk: int, merchant_name: str, expiry_month: int, expiry_year: int,
                        now: datetime | None = None) -> CardConsent:
    """The customer ticked `save_card` when submitting the card of the payment `payment_pk` of
    the merchant `merchant_name` (already moved to PROCESSING, so this runs once per payment).
    Keeps the consent text shown, its time and the card's expiry (for the token; nothing else
    of the card). Raises FeatureNotAvailable in production."""
    ensure_tokens_available()
    if not 1 <= expiry_month <= 12:
        raise ValueError("expiry month must be 1 to 12")
    consent, _ = CardConsent.objects.update_or_create(
        payment_id=payment_pk,
        defaults={"text": card_consent_text(merchant_name), "given_at": now or timezone.now(),
                  "expiry_month": expiry_month, "expiry_year": expiry_year},
    )
    return consent


def card_consent_forget(*, payment_pk: int) -> int:
    """A new card attempt of the payment `payment_pk` without the customer's consent: the consent an earlier
    attempt gave was for another card (declined, or its OTP wrong), so its expiry is forgotten
    and it can never become a token of this payment's card. The record stays."""
    return CardConsent.objects.filter(payment_id=payment_pk, expiry_month__isnull=False).update(
        expiry_month=None, expiry_year=None)


def card_consents_purge(*, now: datetime | None = None) -> int:
    """Forget the card expiry of consents that can no longer become a token: their payment
    ended without success, or is open again after the card attempt that gave the consent
    failed (hosted retries: PENDING), or succeeded more than TOKEN_CONSENT_WINDOW ago. The
    consent and its text stay (they are the record). Returns how many were purged. Safe to
    run at any time."""
    now = now or timezone.now()
    return (CardConsent.objects.filter(expiry_month__isnull=False)
            .filter(Q(payment__status__in=PAYMENT_STATUSES_WITHOUT_TOKEN)
                    | Q(payment__completed_at__lt=now - TOKEN_CONSENT_WINDOW))
            .update(expiry_month=None, expiry_year=None))


# --- creation -----------------------------------------------------------------------------

@dataclass(frozen=True)
class PaidCard:
    """What a token is made from: a SUCCESS card payment, as payments hands it over (checked
    on its side: payments.services.card_tokens). Nothing of the card but what the gateway keeps."""
    pk: int
    merchant_id: int
    created_at: datetime
    completed_at: datetime
    network: str
    last4: str
    issuer: str
    bank_rrn: str  # the proof that the card was just authenticated (3-D Secure)


@dataclass(frozen=True)
class TokenCreated:
    token: Token
    created: bool  # False: the payment's token existed already and is returned again


def _consent_timestamp(value: int, *, payment: PaidCard, now: datetime) -> datetime:
    """consent.consentTimestamp: not ahead of our clock by more than the request clock skew,
    and not before the payment was created (less the same skew): the customer consented
    during the payment."""
    skew = settings.REQUEST_CLOCK_SKEW_SECONDS
    if value > int(now.timestamp()) + skew:
        raise ValidationError("is in the future", field="consent.consentTimestamp")
    if value < int(payment.created_at.timestamp()) - skew:
        raise ValidationError("is before the payment was created; the customer consents during the payment",
                              field="consent.consentTimestamp")
    return datetime.fromtimestamp(value, tz=dt_timezone.utc)


def consent_given_check(consent_given) -> None:
    """consent.consentGiven must be exactly true. Raises ValidationError naming it."""
    if consent_given is not True:
        raise ValidationError("must be true: a token is made only with the customer's consent",
                              field="consent.consentGiven")


def token_create(*, payment: PaidCard, consent_timestamp: int, consent_text: str,
                 now: datetime | None = None) -> TokenCreated:
    """Make the token of `payment`, a successful card payment during which the customer
    consented (`save_card`) and passed 3-D Secure (payments.services.card_tokens checks the
    payment and hands it over). One token per payment: asked again, the payment's live token
    is returned (created=False).

    Raises FeatureNotAvailable in production; ValidationError naming the field when no consent
    was recorded, consentTimestamp is out of bounds, the consent has lapsed, the card has
    expired, or the payment's token was deleted."""
    ensure_tokens_available()
    now = now or timezone.now()
    consent = CardConsent.objects.filter(payment_id=payment.pk).first()
    if consent is None:
        raise ValidationError("the customer did not consent to save the card during this payment",
                              field="paymentId")
    timestamp = _consent_timestamp(consent_timestamp, payment=payment, now=now)

    existing = Token.objects.filter(payment_id=payment.pk).first()
    if existing is not None:
        return TokenCreated(_existing_or_refuse(existing), created=False)
    if consent.expiry_month is None or payment.completed_at < now - TOKEN_CONSENT_WINDOW:
        raise ValidationError(f"the consent given during this payment has lapsed: a token is made within "
                              f"{TOKEN_CONSENT_WINDOW.days} days of the payment", field="paymentId")
    if card_expired(consent.expiry_month, consent.expiry_year, today=timezone.localdate(now)):
        raise ValidationError("the card used for this payment has expired", field="paymentId")

    network = get_network()
    try:
        issued = network.provision(network=payment.network, last4=payment.last4,
                                   issuer=payment.issuer, authentication_reference=payment.bank_rrn)
    except NetworkRefused as exc:
        raise ValidationError(f"the card network refused to issue a token: {exc}", field="paymentId") from None
    try:
        outcome = _token_store(consent_id=consent.pk, merchant_id=payment.merchant_id, issued=issued,
                               timestamp=timestamp, text=consent_text)
    except BaseException:
        network.delete(reference=issued.reference)  # nothing in the vault points at it
        raise
    if not outcome.created:
        network.delete(reference=issued.reference)  # another request made the token first
    return outcome


def _existing_or_refuse(token: Token) -> Token:
    if not token.is_active:
        raise ValidationError("the token made from this payment was deleted; the customer consents again on "
                              "a new payment", field="paymentId")
    return token


@transaction.atomic(durable=True)
def _token_store(*, consent_id: int, merchant_id: int, issued: NetworkToken, timestamp: datetime,
                 text: str) -> TokenCreated:
    consent = lock_card_consent(consent_id)
    existing = Token.objects.filter(payment_id=consent.payment_id).first()
    if existing is not None:
        return TokenCreated(_existing_or_refuse(existing), created=False)
    if consent.expiry_month is None:
        raise ValidationError("the consent given during this payment has lapsed", field="paymentId")
    token = Token.objects.create(
        merchant_id=merchant_id, payment_id=consent.payment_id, network=issued.network, last4=issued.last4,
        expiry_month=consent.expiry_month, expiry_year=consent.expiry_year, issuer=issued.issuer,
        network_reference=issued.reference, consent_timestamp=timestamp, consent_text=text,
    )
    # The expiry now lives with the token only.
    consent.expiry_month = consent.expiry_year = None
    consent.save(update_fields=["expiry_month", "expiry_year"])
    return TokenCreated(token, created=True)


# --- deletion -----------------------------------------------------------------------------

def token_snapshot(token: Token) -> dict:
    """A token as the audit log shows it: its metadata, never the expiry or network reference."""
    return {"tokenId": token.token_id, "status": token.status, "network": token.network, "last4": token.last4,
            "issuer": token.issuer, "paymentId": token.payment.payment_id}


def token_delete(*, token: Token, actor, actor_name: str) -> Token:
    """Delete a token for good: the vault forgets its expiry and network reference (so it can
    never pay again, even in sessions already created with it), the deletion is audited, and
    the network is told after the commit. `actor` is the staff user (console) or None (API,
    the merchant: `actor_name` names it). Raises NotFound when the token is deleted already
    (by a request that got there first)."""
    with transaction.atomic():
        token = lock_token(token.pk)
        if not token.is_active:
            raise NotFound("no token with that tokenId")
        before = token_snapshot(token)
        reference = token.network_reference
        token.status = Token.Status.DELETED
        token.deleted_at = timezone.now()
        token.deleted_by = actor_name[:160]
        token.expiry_month = token.expiry_year = None
        token.network_reference = ""
        token.save(update_fields=["status", "deleted_at", "deleted_by", "expiry_month", "expiry_year",
                                  "network_reference"])
        audit_record(actor=actor if actor is not None else actor_name, action="token.delete", obj=token,
                     merchant=token.merchant, before=before, after=token_snapshot(token))
    if not settings.IS_PRODUCTION:
        get_network().delete(reference=reference)
    return token


# --- paying with a token ------------------------------------------------------------------

def token_payment_link(*, token: Token, payment_pk: int, merchant_id: int) -> TokenPayment:
    """Record that the hosted session `payment_pk` of merchant `merchant_id` is to be paid with
    `token` (same merchant)."""
    if token.merchant_id != merchant_id:
        raise ValidationError("unknown token", field="tokenId")
    return TokenPayment.objects.create(token=token, payment_id=payment_pk)


@sensitive_variables("cvv")
def token_authorize(*, token: Token, amount: int, cvv: str) -> NetworkAnswer:
    """Ask the card network to authorise a payment of `amount` paise with `token` and the CVV
    the customer typed (in memory only): a 3-D Secure challenge when the token is live, else a
    decline. Raises FeatureNotAvailable in production."""
    return get_network().authorize(reference=token.network_reference, cvv=cvv, amount=amount)
