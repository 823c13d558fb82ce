"""Every read of tokens. Each is scoped to one merchant (its vault) or to one payment: another
merchant's token answers exactly as a token that does not exist, and so does a deleted one.
A payment is named by its primary key and its merchant's (payments uses tokens, never the
other way round)."""
from __future__ import annotations

from datetime import date

from django.conf import settings
from django.utils import timezone

from gateway.core.errors import FeatureNotAvailable, NotFound, ValidationError
from gateway.platform.models import Merchant
from tokens.models import Token, TokenPayment

TOKEN_ID_MAX = 40
NOT_IN_PRODUCTION = "Card tokenisation is a staging-only beta; it is not available in production."


def ensure_tokens_available() -> None:
    """Raises FeatureNotAvailable in production: the whole beta is staging only."""
    if settings.IS_PRODUCTION:
        raise FeatureNotAvailable(NOT_IN_PRODUCTION)


def card_expired(month: int | None, year: int | None, *, today: date | None = None) -> bool:
    """A card is valid to the end of its expiry month."""
    if month is None or year is None:
        return True
    today = today or timezone.localdate()
    return (year, month) < (today.year, today.month)


def _active_token(merchant: Merchant, token_id) -> Token | None:
    if not isinstance(token_id, str) or not token_id or len(token_id) > TOKEN_ID_MAX:
        return None
    return (Token.objects.select_related("payment")
            .filter(merchant=merchant, token_id=token_id, status=Token.Status.ACTIVE).first())


def token_get_for_merchant(*, merchant: Merchant, token_id: str) -> Token:
    """The merchant's live token. Raises NotFound for an unknown, deleted or another
    merchant's token (all the same answer), FeatureNotAvailable in production."""
    ensure_tokens_available()
    token = _active_token(merchant, token_id)
    if token is None:
        raise NotFound("no token with that tokenId")
    return token


def token_get_usable(*, merchant: Merchant, token_id: str, today: date | None = None) -> Token:
    """The token a new checkout session may be paid with (POST /api/v2/payments with tokenId).
    Raises FeatureNotAvailable in production (any tokenId), ValidationError naming tokenId for
    an unknown, deleted or another merchant's token (one message for all three), or one whose
    card has expired."""
    if settings.IS_PRODUCTION:
        raise FeatureNotAvailable("tokenId: paying with a token is a staging-only beta; it is not available "
                                  "in production.")
    token = _active_token(merchant, token_id)
    if token is None:
        raise ValidationError("unknown token", field="tokenId")
    if card_expired(token.expiry_month, token.expiry_year, today=today):
        raise ValidationError("the card of this token has expired", field="tokenId")
    return token


def token_for_payment(*, payment_pk: int) -> Token | None:
    """The token a hosted session was created with (whatever its status), or None."""
    use = TokenPayment.objects.select_related("token").filter(payment_id=payment_pk).first()
    return use.token if use else None


def token_usable_for_payment(*, payment_pk: int, merchant_id: int, today: date | None = None) -> Token:
    """The token that pays this session (of merchant `merchant_id`) now. Raises
    FeatureNotAvailable in production and ValidationError naming tokenId when the session has
    no token, or its token was deleted or its card expired after the session was created."""
    ensure_tokens_available()
    token = token_for_payment(payment_pk=payment_pk)
    if token is None or not token.is_active or token.merchant_id != merchant_id:
        raise ValidationError("this saved card is no longer available", field="tokenId")
    if card_expired(token.expiry_month, token.expiry_year, today=today):
        raise ValidationError("this saved card has expired", field="tokenId")
    return token


def token_for_checkout(*, payment_pk: int, merchant_id: int) -> Token | None:
    """What the checkout's card form offers: the session's token while it can pay, else None
    (the page then offers the card form)."""
    if settings.IS_PRODUCTION:
        return None
    try:
        return token_usable_for_payment(payment_pk=payment_pk, merchant_id=merchant_id)
    except ValidationError:
        return None


# --- the support console's reads (gateway.console) -------------------------------------------

def tokens_made_from_payment(*, payment_pk: int) -> list[Token]:
    """The token saved from the payment `payment_pk` (whatever its status), as a list."""
    return list(Token.objects.filter(payment_id=payment_pk))


def token_uses_of_payment(*, payment_pk: int) -> list[TokenPayment]:
    """The payment's link to the token it was created to be paid with, with the token, as a list."""
    return list(TokenPayment.objects.filter(payment_id=payment_pk).select_related("token"))
