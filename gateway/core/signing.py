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
    verify_checksum_of_any(secret_key, given, parts)


def verify_checksum_of_any(secret_key: str, given, *bases: tuple) -> int:
    """The index of the first base string (a tuple of parts) whose checksum `given` is;
    InvalidSignature when it is none of them. Each is compared in constant time, and all are
    computed, so the time taken says nothing about which one came close.

    Where a request may be signed two ways, the first is the full base string (every field
    that moves money or names where data goes, docs/security.md#signed-requests) and the
    second the one the interface or an SDK fixed, which leaves some out: the caller then
    records the checksum's use (gateway.core.replay), whichever matched."""
    if not isinstance(given, str):
        raise InvalidSignature()
    matched = [hmac.compare_digest(compute_checksum(secret_key, *parts).encode(), given.encode()) for parts in bases]
    if True not in matched:
        raise InvalidSignature()
    return matched.index(True)


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


def verify_signed_if_sent_or_required(merchant, *, checksum, timestamp, fields, full_fields=None) -> int | None:
    """Refunds, refund status and enquiry: `checksum` and `timestamp` are optional (the
    interface's requests have neither; the official SDK sends both), and verified as
    verify_signed_request does when either is sent, or always when the merchant has chosen
    "signed requests required" (then a missing timestamp is INVALID_TIMESTAMP and a missing
    checksum INVALID_SIGNATURE, as on payment creation). With `full_fields`, a checksum over
    them (then the timestamp) is accepted as well as one over `fields`. Returns the timestamp
    when the request was signed, None when it was not."""
    if checksum is None and timestamp is None and not merchant.signed_requests_required:
        return None
    value = verify_timestamp(timestamp)
    if checksum is None:
        raise InvalidSignature("checksum is required: this merchant requires signed requests.")
    bases = ((*full_fields, value),) if full_fields is not None else ()
    verify_checksum_of_any(merchant.secret_key, checksum, *bases, (*fields, value))
    return value
