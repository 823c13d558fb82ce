"""One use per signed request: the replay store (issue 29, docs/security.md#signed-requests).

A checksum proves who made a request and when (its timestamp is accepted for 5 minutes), not
that it is new. The base strings fixed by the interface and the SDKs leave fields out (the SDK
3.0.0's refund checksum covers no amount), so within those 5 minutes a signed request could be
sent again, its unsigned fields changed: one refund request replayed with other amounts
refunded a payment in full. So every checksum that moves money, or names where the gateway
sends data, is recorded here on its first use, in the shared cache (Redis, one store for every
web node), for as long as its timestamp is accepted; a second use is refused.

- A second use is accepted only as an exact repeat that cannot act twice: the same request
  (`repeat` equal to the first's), which the caller lets through only where something else
  answers a repeat with the first result (a merchantTxnId used once, a refundId, an
  X-Idempotency-Key). Any other second use is INVALID_SIGNATURE, naming the reason.
- When the store cannot be reached (Redis down or hung: gateway.core.redisguard), a call that
  moves money (`fail_closed`: refunds) is refused with SERVICE_UNAVAILABLE, nothing written;
  one that does not go on (payment creation, whose merchantTxnId is used once, in the
  database), with a warning in the log.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time

from django.conf import settings
from django.core.cache import cache

from gateway.core import redisguard
from gateway.core.errors import InvalidSignature, ServiceUnavailable

logger = logging.getLogger("gateway.replay")

REPLAYED_MESSAGE = ("this checksum was already used: a signed request is accepted once. Sign each request anew "
                    "(a new timestamp); to retry safely, send the same request with the same refundId or "
                    "X-Idempotency-Key")


def request_digest(*parts) -> str:
    """SHA-256 of `parts` (a request body, a header) as canonical JSON, so that key order and
    whitespace make no difference but every value, and its JSON type, does."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def checksum_use(*, merchant_pk: int, checksum: str, timestamp: int, repeat: str | None,
                 fail_closed: bool) -> None:
    """Record this use of `checksum` (verified, with its accepted `timestamp`). Raises
    InvalidSignature when it was used before within its timestamp's window, unless `repeat` is
    not None and equal to the first use's; ServiceUnavailable when the store cannot be reached
    and `fail_closed`."""
    key = f"replay:{merchant_pk}:{checksum}"
    # As long as the timestamp is accepted (REQUEST_MAX_AGE_SECONDS after it), and a second more.
    keep = max(1, int(timestamp) + settings.REQUEST_MAX_AGE_SECONDS + 1 - int(time.time()))
    try:
        if cache.add(key, repeat or "", keep):
            return
        first = cache.get(key)
    except Exception as exc:  # noqa: BLE001 - any failure of the store is "cannot check"
        if isinstance(exc, redisguard.OUTAGE_ERRORS):
            reason = f"Redis is unreachable ({type(exc).__name__})"
        else:
            reason = f"the store failed ({type(exc).__name__}: {exc})"
        if fail_closed:
            logger.warning("signed request refused: its checksum cannot be checked for a replay, %s", reason)
            raise ServiceUnavailable("signed requests that move money cannot be checked for replays right now; "
                                     "retry shortly.") from None
        logger.warning("signed request accepted without the replay check: %s", reason)
        return
    if first is None:
        return  # its window ended between the two calls: its timestamp is about to be refused anyway
    if repeat is not None and first == repeat:
        return
    raise InvalidSignature(REPLAYED_MESSAGE)
