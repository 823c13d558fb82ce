"""Saving the card of a payment as a token (beta, staging only; docs/tokens.md).

A token is the tokens app's (the vault, the consent, the card network); the payment it is made
from is ours. So payments checks its own side here, the payment exists, is this merchant's,
succeeded and was paid by card, and hands tokens what a token needs of it as plain values
(tokens.services.PaidCard). tokens never reads a payment itself.
"""
from __future__ import annotations

from datetime import datetime

from gateway.core.errors import NotFound, ValidationError
from gateway.platform.models import Merchant
from payments.models import Payment
from tokens import services as token_services
from tokens.selectors import ensure_tokens_available


def payment_token_create(*, merchant: Merchant, payment_id: str, consent_given, consent_timestamp: int,
                         consent_text: str, now: datetime | None = None) -> token_services.TokenCreated:
    """Make the token of a successful card payment of `merchant` during which the customer
    consented (`save_card`) and passed 3-D Secure (tokens.services.token_create). One token per
    payment: asked again, the payment's live token is returned (created=False).

    Raises FeatureNotAvailable in production; ValidationError naming consent.consentGiven when
    it is not true; NotFound (paymentId) for an unknown or another merchant's payment;
    ValidationError naming paymentId when the payment is not SUCCESS or not by card; and
    whatever tokens.services.token_create raises about the consent and the card."""
    ensure_tokens_available()
    token_services.consent_given_check(consent_given)
    payment = Payment.objects.filter(merchant=merchant, payment_id=payment_id).first()
    if payment is None:
        raise NotFound("paymentId: no payment with that id")
    if payment.status != Payment.Status.SUCCESS:
        raise ValidationError(f"the payment is {payment.enquiry_status}; a token is made only from a successful "
                              "card payment", field="paymentId")
    if payment.payment_mode != Payment.Mode.CARD:
        raise ValidationError("the payment was not made by card", field="paymentId")
    paid = token_services.PaidCard(
        pk=payment.pk, merchant_id=payment.merchant_id, created_at=payment.created_at,
        completed_at=payment.completed_at, network=payment.card_network, last4=payment.card_last4,
        issuer=payment.card_issuer, bank_rrn=payment.bank_rrn)
    return token_services.token_create(payment=paid, consent_timestamp=consent_timestamp,
                                       consent_text=consent_text, now=now)
