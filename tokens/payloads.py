"""The JSON bodies of the token endpoints (docs/tokens.md). The card data in them is what the
interface lists; the network's token reference never leaves the gateway."""
from __future__ import annotations

from datetime import datetime
from datetime import timezone as dt_timezone

from tokens.models import Token
from tokens.selectors import card_expired


def iso_utc(value: datetime) -> str:
    """ISO 8601, UTC, whole seconds, 'Z': 2026-11-21T15:00:00Z."""
    return value.astimezone(dt_timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def token_created_body(token: Token) -> dict:
    """POST /api/v2/tokens: exactly the fields of the interface's token creation response."""
    return {
        "tokenId": token.token_id,
        "network": token.network,
        "lastFourDigits": token.last4,
        "expiryMonth": f"{token.expiry_month:02d}",
        "expiryYear": f"{token.expiry_year:04d}",
        "issuer": token.issuer,
        "createdAt": iso_utc(token.created_at),
    }


def token_status(token: Token) -> str:
    """ACTIVE, or EXPIRED once the card's expiry month has passed (deleted tokens are not shown)."""
    return "EXPIRED" if card_expired(token.expiry_month, token.expiry_year) else "ACTIVE"


def token_body(token: Token) -> dict:
    """GET /api/v2/tokens/{tokenId}: the creation response plus status, the payment it was made
    from and the consent time the merchant recorded."""
    return {
        **token_created_body(token),
        "status": token_status(token),
        "paymentId": token.payment.payment_id,
        "consentTimestamp": int(token.consent_timestamp.timestamp()),
    }


def token_deleted_body(token: Token) -> dict:
    """DELETE /api/v2/tokens/{tokenId}."""
    return {"tokenId": token.token_id, "status": Token.Status.DELETED.value, "deletedAt": iso_utc(token.deleted_at)}
