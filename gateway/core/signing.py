"""Every signature the gateway checks or makes, in one place.

- request checksum: lowercase hex HMAC-SHA256 of fields joined by "|", keyed with the
  merchant's secret key (interface.md, Authentication 4);
- request timestamp: Unix seconds, at most 5 minutes old, at most REQUEST_CLOCK_SKEW_SECONDS
  ahead of our clock (interface.md, Authentication 5);
- webhook signature: "<ms>.<base64 HMAC-SHA256 of '<ms>.<raw body>'>" keyed with the webhook
  secret (interface.md, Authentication 6);
- return-redirect signature: lowercase hex HMAC-SHA256 of the other parameters as key=value,
  sorted by key, joined by "|" (CONTRACT.md, Return to the merchant).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
import time

from django.conf import settings

from gateway.core.errors import InvalidSignature, InvalidTimestamp, RequestExpired


def hmac_hex(key: str, message: str) -> str:
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()


def checksum_base(*parts) -> str:
    return "|".join(str(p) for p in parts)


def compute_checksum(secret_key: str, *parts) -> str:
    return hmac_hex(secret_key, checksum_base(*parts))


def verify_checksum(secret_key: str, given, *parts) -> None:
    """Raise InvalidSignature unless `given` is the checksum of `parts` (constant time)."""
    if not isinstance(given, str):
        raise InvalidSignature()
    expected = compute_checksum(secret_key, *parts)
    if not hmac.compare_digest(expected.encode(), given.encode()):
        raise InvalidSignature()


_DECIMAL = re.compile(r"-?[0-9]{1,18}")


def _timestamp_value(timestamp) -> int | None:
    """Unix seconds as sent (a JSON integer, a whole-valued JSON number, or the decimal string
    of a query parameter) as an int; None for anything else."""
    if isinstance(timestamp, bool):
        return None
    if isinstance(timestamp, int):
        return timestamp
    if isinstance(timestamp, float):
        return int(timestamp) if math.isfinite(timestamp) and timestamp.is_integer() else None
    if isinstance(timestamp, str) and _DECIMAL.fullmatch(timestamp):
        return int(timestamp)
    return None


def verify_timestamp(timestamp, *, now: float | None = None) -> int:
    """Accept a Unix-seconds timestamp no older than 300 s and no further ahead than the
    allowed clock skew. Raises InvalidTimestamp (missing, not an integer, future) or
    RequestExpired (too old)."""
    if timestamp is None or timestamp == "":
        raise InvalidTimestamp()
    value = _timestamp_value(timestamp)
    if value is None:
        raise InvalidTimestamp("timestamp must be Unix seconds as an integer.")
    now = int(time.time() if now is None else now)
    if value > now + settings.REQUEST_CLOCK_SKEW_SECONDS:
        raise InvalidTimestamp("timestamp is in the future.")
    if now - value > settings.REQUEST_MAX_AGE_SECONDS:
        raise RequestExpired()
    return value


def verify_signed_request(secret_key: str, *, checksum, timestamp, fields) -> int:
    """The one order every signed merchant request is checked in: the timestamp first (missing,
    malformed or future: INVALID_TIMESTAMP; older than 5 minutes: REQUEST_EXPIRED), then the
    checksum over `fields` followed by the timestamp written as a decimal integer
    (INVALID_SIGNATURE). Returns the timestamp as an int."""
    value = verify_timestamp(timestamp)
    verify_checksum(secret_key, checksum, *fields, value)
    return value


def webhook_signature(webhook_secret: str, body: bytes, timestamp_ms: int) -> str:
    """The X-Service-Signature header value for `body` sent at `timestamp_ms`."""
    signed = str(timestamp_ms).encode() + b"." + body
    digest = hmac.new(webhook_secret.encode(), signed, hashlib.sha256).digest()
    return f"{timestamp_ms}.{base64.b64encode(digest).decode()}"


def return_signature(secret_key: str, params: dict) -> str:
    base = "|".join(f"{k}={params[k]}" for k in sorted(params) if k != "signature")
    return hmac_hex(secret_key, base)


def verify_signed_if_sent_or_required(merchant, *, checksum, timestamp, fields) -> None:
    """Refunds, refund status and enquiry: `checksum` and `timestamp` are optional (the
    interface's requests have neither; the official SDK sends both), and verified as
    verify_signed_request does when either is sent, or always when the merchant has chosen
    "signed requests required" (then a missing timestamp is INVALID_TIMESTAMP and a missing
    checksum INVALID_SIGNATURE, as on payment creation)."""
    if checksum is None and timestamp is None and not merchant.signed_requests_required:
        return
    value = verify_timestamp(timestamp)
    if checksum is None:
        raise InvalidSignature("checksum is required: this merchant requires signed requests.")
    verify_checksum(merchant.secret_key, checksum, *fields, value)
