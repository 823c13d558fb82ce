"""Which acquirers are in rotation for a method: a rolling technical error rate per acquirer and
method, from the real calls routing makes (payments.services.routing), shared by every process in
Redis. A circuit breaker, as docs/decisions.md D21 describes:

- Every routed call counts once in a BUCKET_SECONDS bucket: `ok` (an answer, a decline or a
  refusal included: the processor answered) or `failed` (a technical failure: the ones routing
  fails over on).
- Out of rotation: over the last WINDOW_SECONDS (30 s), at least MIN_CALLS calls and a
  technical error rate of at least THRESHOLD. At 20 payments/s that is read within a bucket or
  two of the trouble starting; the routes then try the acquirer last, not first.
- Probed back: while out, one payment every PROBE_SECONDS tries it first (its failure fails over
  as any other); the window's failures age out, so an acquirer that answers again is back in
  rotation within WINDOW_SECONDS plus PROBE_SECONDS (60 s) of recovering, inside the 2 minutes
  asked.
- Redis unreachable: everyone is in rotation (fail open; routing still fails over per call).
"""
from __future__ import annotations

import logging
import time

from django.core.cache import cache

from gateway.core import redisguard
from gateway.platform.ratelimit import window_hit

logger = logging.getLogger("payments.routing")

BUCKET_SECONDS = 5
WINDOW_SECONDS = 30
MIN_CALLS = 5
THRESHOLD = 0.5
PROBE_SECONDS = 30
_OUTAGE = redisguard.OUTAGE_ERRORS + (redisguard.RedisUnavailable,)


def _key(name: str, method: str, bucket: int, kind: str) -> str:
    return f"acqh:{name}:{method}:{bucket}:{kind}"


def health_record(name: str, method: str, *, failed: bool, now: float | None = None) -> None:
    """Count one routed call of `name` for `method`: a technical failure, or an answer."""
    bucket = int(time.time() if now is None else now) // BUCKET_SECONDS
    try:
        window_hit(_key(name, method, bucket, "failed" if failed else "ok"), WINDOW_SECONDS + BUCKET_SECONDS)
    except _OUTAGE:
        pass


def _window_keys(name: str, method: str, now: float | None) -> list[str]:
    bucket = int(time.time() if now is None else now) // BUCKET_SECONDS
    buckets = range(bucket - WINDOW_SECONDS // BUCKET_SECONDS + 1, bucket + 1)
    return [_key(name, method, b, kind) for b in buckets for kind in ("ok", "failed")]


def health_rates(pairs: list[tuple[str, str]], *, now: float | None = None) -> dict[tuple[str, str], tuple[int, int]]:
    """(calls, technical failures) over the last WINDOW_SECONDS of each (acquirer, method) of
    `pairs`, in one read of Redis."""
    keys = {pair: _window_keys(*pair, now) for pair in pairs}
    counts = cache.get_many([key for pair_keys in keys.values() for key in pair_keys])
    return {pair: (sum(int(counts.get(k) or 0) for k in pair_keys),
                   sum(int(counts.get(k) or 0) for k in pair_keys if k.endswith(":failed")))
            for pair, pair_keys in keys.items()}


def health_rate(name: str, method: str, *, now: float | None = None) -> tuple[int, int]:
    """(calls, technical failures) of `name` for `method` over the last WINDOW_SECONDS."""
    return health_rates([(name, method)], now=now)[(name, method)]


def _failing(calls: int, failed: int) -> bool:
    return calls >= MIN_CALLS and failed >= THRESHOLD * calls


def out_of_rotation(pairs: list[tuple[str, str]], *, now: float | None = None) -> set[tuple[str, str]]:
    """Which (acquirer, method) of `pairs` are out of rotation now, by the same rule as
    health_out but only reading: no probe is taken, so that showing the state (the checkout's
    degraded notice, the rotation gauge) never spends the probe a payment should make. One read
    of Redis; Redis unreachable: none (fail open, as routing)."""
    if not pairs:
        return set()
    try:
        rates = health_rates(pairs, now=now)
    except _OUTAGE:
        return set()
    return {pair for pair, (calls, failed) in rates.items() if _failing(calls, failed)}


def health_out(name: str, method: str, *, now: float | None = None) -> bool:
    """Whether `name` is out of rotation for `method` now (the module's docstring). A call that
    finds it out but a probe due takes the probe (answers False) for every process."""
    try:
        calls, failed = health_rate(name, method, now=now)
        if not _failing(calls, failed):
            return False
        if cache.add(f"acqh:probe:{name}:{method}", 1, PROBE_SECONDS):
            logger.info("%s is out of rotation for %s (%d of %d calls failed): this payment probes it",
                        name, method, failed, calls)
            return False
        return True
    except _OUTAGE:
        return False


def in_rotation_first(names: list[str], method: str, *, now: float | None = None) -> list[str]:
    """`names` with those out of rotation for `method` moved to the end (kept as a last resort)."""
    out = {name for name in names if len(names) > 1 and health_out(name, method, now=now)}
    return [n for n in names if n not in out] + [n for n in names if n in out]
