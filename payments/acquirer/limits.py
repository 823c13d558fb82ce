"""One outbound limit per processor account, shared by every web and worker process (issue 28).

A processor limits calls per account, whichever of our processes makes them, so the count lives
in Redis (gateway.platform.ratelimit.window_take, the counter every limiter of ours counts with,
here counting a call only when it fits):
a ten-second window per account holding a sixth of the acquirer's per-minute allowance,
which spreads a burst over the minute instead of spending the minute's allowance in its first
seconds. Any acquirer's client asks `call_permit` before each call:

- a slot free in this second: go;
- none: wait for the next window if the caller's time budget (`deadline`, time.monotonic())
  allows it, else raise LimitReached with the seconds to wait, which the services answer as
  SERVICE_UNAVAILABLE with Retry-After: no call is made, nothing is written.

The processor's own answers adjust it: `limit_lowered` records a lower allowance it announced
(its x-ratelimit-* headers), for every process, for a minute. Redis unreachable: the limit is
not applied (logged), and the processor's own 429 remains the guard.
"""
from __future__ import annotations

import logging
import math
import time

from django.core.cache import cache

from gateway.core import redisguard
from gateway.platform.ratelimit import window_take
from payments.acquirer.base import AcquirerUnavailable

logger = logging.getLogger(__name__)


class LimitReached(AcquirerUnavailable):
    """No call was made: the account's allowance is spent for `retry_after` seconds more than
    the caller could wait."""

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = max(1, int(retry_after))


WINDOW_SECONDS = 10


def per_window(calls_per_minute: int) -> int:
    return max(1, calls_per_minute * WINDOW_SECONDS // 60)


def _lowered_key(account: str) -> str:
    return f"acq:limit:{account}"


def limit_lowered(account: str, calls_per_minute: int) -> None:
    """The processor said the account's allowance is `calls_per_minute` (its x-ratelimit-limit,
    or what x-ratelimit-remaining leaves): every process keeps below it for the next minute."""
    try:
        cache.set(_lowered_key(account), int(calls_per_minute), 60)
    except redisguard.OUTAGE_ERRORS + (redisguard.RedisUnavailable,):
        pass


def call_permit(account: str, *, calls_per_minute: int, deadline: float, share: float = 1.0,
                now=time.time) -> float | None:
    """Take one call of `account`'s allowance (`calls_per_minute`, or lower if the processor
    said so), waiting for the next window while `deadline` allows. Raises LimitReached when it
    does not. Returns the share of the window's allowance left after this call (the headroom
    gauge's "limiter" source), None when Redis could not say.

    `share` below 1: this call may only take the window's first share of calls. A call that
    starts a piece of work which needs more calls to finish (a new order, which an order pay
    follows) asks with a share, so that in a burst the calls finishing work already started
    find room, instead of every new order taking a slot and every order pay finding none
    (benchmarks/acquirer_burst.py found exactly that: no payment made at all)."""
    while True:
        try:
            lowered = cache.get(_lowered_key(account))
            window_allowance = per_window(min(calls_per_minute, lowered) if lowered else calls_per_minute)
            allowance = max(1, int(window_allowance * share)) if share < 1 else window_allowance
            moment = now()
            window = int(moment) // WINDOW_SECONDS * WINDOW_SECONDS
            key = f"acq:{account}:{window}"
            # Not made, so not counted, not even for a moment: a refused call must not use up
            # the slots a call with the whole window (share 1) may still take.
            count = window_take(key, WINDOW_SECONDS + 1, allowance)
            if count:
                return max(0.0, 1 - count / window_allowance)
        except redisguard.RedisUnavailable:
            return None  # Redis failed a moment ago and rests: fail open, logged then
        except redisguard.OUTAGE_ERRORS as exc:
            logger.warning("outbound limit of %s not applied: Redis is unreachable (%s)", account, type(exc).__name__)
            return None
        wait = window + WINDOW_SECONDS - moment
        if time.monotonic() + wait > deadline:
            raise LimitReached(f"{account}: the processor's allowance is spent for this window",
                               retry_after=math.ceil(wait))
        time.sleep(wait)
