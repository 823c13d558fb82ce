"""Inbound Cashfree webhooks: is this really Cashfree, and is it fresh?

As Cashfree specifies (Payment Gateway > Webhooks > Signature verification): the signature in
`x-webhook-signature` is Base64(HMAC-SHA256(key=secret, message=x-webhook-timestamp + raw
body)), over the body's bytes exactly as received (never a re-serialised JSON), with the PG
client secret as the key (CASHFREE_WEBHOOK_SECRET where the account has a separate one).

What Cashfree leaves to the receiver, and how we decide (docs/going-live.md):
- `x-webhook-timestamp` is epoch milliseconds (Cashfree's example: 1617695238078). Only
  digits are accepted; a seconds value would read as 1970 and be refused as stale.
- Freshness window: at most MAX_AGE_SECONDS (300) old, at most MAX_AHEAD_SECONDS (30) in the
  future (clock skew). Anything outside is refused even with a good signature, so a captured
  delivery cannot be replayed after five minutes; within them, the recording in inbound.py
  (one AcquirerNotice per delivered body) makes a second delivery of the same body change
  nothing (this function has no storage).
- Comparison is constant time (hmac.compare_digest) over the bytes of the two signatures.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from decimal import Decimal
from typing import Any, Mapping

MAX_AGE_SECONDS = 300
MAX_AHEAD_SECONDS = 30
SIGNATURE_HEADER = "x-webhook-signature"
TIMESTAMP_HEADER = "x-webhook-timestamp"


class WebhookVerificationError(Exception):
    """The delivery is not to be trusted; the message says why (never echoes the secret)."""


class WebhookNotFresh(WebhookVerificationError):
    """Genuinely signed, but outside the freshness window: a replay, or a clock far off."""


class WebhookMalformed(WebhookVerificationError):
    """Genuinely signed, but the body is not the JSON object Cashfree sends."""


def webhook_signature(*, secret: str, timestamp: str, raw_body: bytes) -> str:
    """Base64 HMAC-SHA256 of timestamp + raw body: what Cashfree puts in x-webhook-signature."""
    digest = hmac.new(secret.encode(), timestamp.encode() + raw_body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_webhook(*, secret: str, headers: Mapping[str, str], raw_body: bytes,
                   now: float | None = None) -> dict[str, Any]:
    """The delivery's JSON (amounts as Decimal) when its signature and timestamp hold;
    WebhookVerificationError otherwise. `headers` are matched case-insensitively."""
    if not secret:
        raise WebhookVerificationError("no Cashfree webhook secret is configured")
    lowered = {key.lower(): value for key, value in headers.items()}
    signature = lowered.get(SIGNATURE_HEADER, "")
    timestamp = lowered.get(TIMESTAMP_HEADER, "")
    if not signature:
        raise WebhookVerificationError(f"missing {SIGNATURE_HEADER}")
    if not timestamp:
        raise WebhookVerificationError(f"missing {TIMESTAMP_HEADER}")
    if not (timestamp.isascii() and timestamp.isdigit()) or len(timestamp) > 16:
        raise WebhookVerificationError(f"{TIMESTAMP_HEADER} is not epoch milliseconds")
    if not isinstance(raw_body, bytes):
        raise TypeError("raw_body must be the request's bytes as received")

    expected = webhook_signature(secret=secret, timestamp=timestamp, raw_body=raw_body)
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise WebhookVerificationError("signature does not match")

    now = time.time() if now is None else now
    sent = int(timestamp) / 1000
    if sent < now - MAX_AGE_SECONDS:
        raise WebhookNotFresh(f"timestamp is more than {MAX_AGE_SECONDS} s old")
    if sent > now + MAX_AHEAD_SECONDS:
        raise WebhookNotFresh(f"timestamp is more than {MAX_AHEAD_SECONDS} s ahead")

    try:
        payload = json.loads(raw_body, parse_float=Decimal)
    except ValueError:
        raise WebhookMalformed("body is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookMalformed("body is not a JSON object")
    return payload
