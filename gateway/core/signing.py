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
from collections.abc import Sequence

from django.conf import settings

from gateway.core.errors import InvalidSignature, InvalidTimestamp, RequestExpired


# The base strings merchants sign, field by field (interface.md, Authentication 4; CONTRACT.md for
# the SDK's enquiry and refund forms).
# Creation checks its checksum itself (verify_checksum), so its names end with the timestamp; the
# others go through verify_signed_request / verify_signed_if_sent_or_required, which add it.
CREATION_CHECKSUM_NAMES = ("merchantId", "merchantTxnId", "amount", "currency", "timestamp")
# Enquiry signs a zero amount and INR (the SDK 3.0.0's form); the timestamp follows.
ENQUIRY_CHECKSUM_NAMES = ("merchantId", "merchantTxnId", "0", "INR")
REFUND_CREATE_CHECKSUM_NAMES = ("merchantId", "transactionId", "refundId")
REFUND_LIST_CHECKSUM_NAMES = ("merchantId", "transactionId")
REFUND_GET_CHECKSUM_NAMES = ("merchantId", "refundId")
# The full base strings (issue 29, docs/security.md#signed-requests): the fixed ones above leave
# out fields that move money or name where data goes; these sign them too, and are accepted
# beside them (an absent field written as ""). The timestamp follows, as above.
S2S_FULL_CHECKSUM_NAMES = ("merchantId", "merchantTxnId", "amount", "currency", "webhookUrl", "timestamp")
HOSTED_FULL_CHECKSUM_NAMES = ("merchantId", "merchantTxnId", "amount", "currency", "returnUrl", "tokenId",
                              "timestamp")
REFUND_CREATE_FULL_CHECKSUM_NAMES = ("merchantId", "transactionId", "refundId", "amount")


def hmac_hex(key: str, message: str) -> str:
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()


def checksum_base(*parts) -> str:
    return "|".join(str(p) for p in parts)


def compute_checksum(secret_key: str, *parts) -> str:
    return hmac_hex(secret_key, checksum_base(*parts))


_LOWER_HEX_64 = re.compile(r"[0-9a-f]{64}")


def checksum_help(given, names: Sequence[str] | None, parts: Sequence) -> str:
    """The INVALID_SIGNATURE message: what a checksum is made of, the base string of this very
    request (its own values, so nothing the caller did not send), and what is wrong with the
    form of the checksum it sent. Never the secret key, never the expected checksum: a message
    that carried it would sign any request for whoever can make one fail."""
    recipe = "|".join(names) if names else None
    lines = ["checksum verification failed."]
    if recipe:
        lines.append(
            f"checksum is the HMAC-SHA256, keyed with your secret key, of the base string {recipe}: "
            "these values in this order, joined by \"|\", with no spaces, numbers written as decimal "
            "integers (amounts in paise, timestamp in Unix seconds); written as 64 lowercase hex characters. "
            f"The base string of this request is \"{checksum_base(*parts)}\"")
    else:
        lines.append("checksum is the HMAC-SHA256 of the base string, keyed with your secret key, "
                     "written as 64 lowercase hex characters.")
    if isinstance(given, str) and not _LOWER_HEX_64.fullmatch(given):
        if re.fullmatch(r"[0-9a-fA-F]{64}", given):
            lines.append("The checksum sent has uppercase letters: write the hex in lowercase.")
        else:
            lines.append(f"The checksum sent is {len(given)} characters long and must be 64 characters "
                         "of 0-9 and a-f (hex, not base64).")
    elif given is not None and not isinstance(given, str):
        lines.append("The checksum sent is not a string.")
    return " ".join(line if line.endswith(".") else line + "." for line in lines)


def verify_checksum(secret_key: str, given, *parts, names: Sequence[str] | None = None) -> None:
    """Raise InvalidSignature unless `given` is the checksum of `parts` (constant time). `names`
    names the parts in order, for a message that teaches the recipe (checksum_help)."""
    if not isinstance(given, str):
        raise InvalidSignature(checksum_help(given, names, parts))
    expected = compute_checksum(secret_key, *parts)
    if not hmac.compare_digest(expected.encode(), given.encode()):
        raise InvalidSignature(checksum_help(given, names, parts))


def verify_checksum_of_any(secret_key: str, given, *bases: tuple, names: Sequence[str] | None = None,
                           full_names: Sequence[str] | None = None) -> int:
    """The index of the base string (a tuple of parts) whose checksum `given` is;
    InvalidSignature when it is none of them. Every one is computed and compared in constant
    time, so the time taken says nothing about which came close.

    Where a request may be signed two ways, the first base is the full one (`full_names`: every
    field that moves money or names where data goes) and the last the one the interface or an
    SDK fixed (`names`), which leaves some out: the caller then records the checksum's use
    (gateway.core.replay), whichever matched. The message teaches the fixed recipe and names
    the full one."""
    if isinstance(given, str):
        matched = [hmac.compare_digest(compute_checksum(secret_key, *parts).encode(), given.encode())
                   for parts in bases]
        if True in matched:
            return matched.index(True)
    message = checksum_help(given, names, bases[-1])
    if full_names and len(bases) > 1:
        message += (f" The full base string {'|'.join(full_names)} is accepted too, and recommended: it also signs "
                    f"what moves money or names where data goes (an absent field written as \"\"); for this request "
                    f"it is \"{checksum_base(*bases[0])}\".")
    raise InvalidSignature(message)


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


# A timestamp that divided by 1000 lands within a day of now was sent in milliseconds.
MILLISECONDS_LOOKALIKE_SECONDS = 86400


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
        if abs(value // 1000 - now) <= MILLISECONDS_LOOKALIKE_SECONDS:
            raise InvalidTimestamp(f"timestamp {value} looks like milliseconds: send Unix seconds "
                                   f"(here {value // 1000}): whole seconds, such as int(time.time()) or Math.floor(Date.now() / 1000).")
        raise InvalidTimestamp(f"timestamp is in the future: {value - now} s ahead of the service's clock "
                               f"(at most {settings.REQUEST_CLOCK_SKEW_SECONDS} s are allowed).")
    if now - value > settings.REQUEST_MAX_AGE_SECONDS:
        raise RequestExpired()
    return value


def verify_signed_request(secret_key: str, *, checksum, timestamp, fields, names: Sequence[str] | None = None) -> int:
    """The one order every signed merchant request is checked in: the timestamp first (missing,
    malformed or future: INVALID_TIMESTAMP; older than 5 minutes: REQUEST_EXPIRED), then the
    checksum over `fields` followed by the timestamp written as a decimal integer
    (INVALID_SIGNATURE; `names` names `fields` for its message). Returns the timestamp as an int."""
    value = verify_timestamp(timestamp)
    verify_checksum(secret_key, checksum, *fields, value, names=_with_timestamp(names))
    return value


def _with_timestamp(names: Sequence[str] | None) -> tuple[str, ...] | None:
    return (*names, "timestamp") if names else None


def webhook_signature(webhook_secret: str, body: bytes, timestamp_ms: int) -> str:
    """The X-Service-Signature header value for `body` sent at `timestamp_ms`."""
    signed = str(timestamp_ms).encode() + b"." + body
    digest = hmac.new(webhook_secret.encode(), signed, hashlib.sha256).digest()
    return f"{timestamp_ms}.{base64.b64encode(digest).decode()}"


def return_signature(secret_key: str, params: dict) -> str:
    base = "|".join(f"{k}={params[k]}" for k in sorted(params) if k != "signature")
    return hmac_hex(secret_key, base)


def verify_signed_if_sent_or_required(merchant, *, checksum, timestamp, fields,
                                      names: Sequence[str] | None = None, full_fields=None,
                                      full_names: Sequence[str] | None = None) -> int | None:
    """Refunds, refund status and enquiry: `checksum` and `timestamp` are optional (the
    interface's requests have neither; the official SDK sends both), and verified as
    verify_signed_request does when either is sent, or always when the merchant has chosen
    "signed requests required" (then a missing timestamp is INVALID_TIMESTAMP and a missing
    checksum INVALID_SIGNATURE, as on payment creation). With `full_fields` (named by
    `full_names`), a checksum over them and the timestamp is accepted as well as one over
    `fields`. Returns the timestamp when the request was signed, None when it was not."""
    if checksum is None and timestamp is None and not merchant.signed_requests_required:
        return None
    value = verify_timestamp(timestamp)
    if checksum is None:
        raise InvalidSignature("checksum is required: this merchant requires signed requests. "
                               + checksum_help(None, _with_timestamp(names), (*fields, value))
                               .removeprefix("checksum verification failed. "))
    bases = ((*full_fields, value),) if full_fields is not None else ()
    verify_checksum_of_any(merchant.secret_key, checksum, *bases, (*fields, value), names=_with_timestamp(names),
                           full_names=_with_timestamp(full_names))
    return value
