"""Redis trouble must not take payments down: every use of Redis is bounded, and fails open.

Redis holds what can be lost or rebuilt: the rate limits' counters, the checkout's bad-link
counts, and the Celery messages that the database's rows make optional (the beat's sweeps find
every delivery, refund and reversal whose message was lost). So a Redis that is down, or worse
hung (it accepts connections and never answers), must cost a request a fraction of a second
at most, never the request.

- Every client has socket and connect timeouts of REDIS_TIMEOUT_SECONDS (the cache's,
  gateway.settings; the publisher's, gateway.core.broker), and no client retries a timeout.
- After a Redis error a process stops asking Redis for REDIS_RETRY_AFTER_SECONDS: its users
  fail at once with RedisUnavailable (`check()`), so a hung Redis costs one timeout per second
  per process, not one per request. The first error of an outage is logged (WARNING), and so
  is its end.

`guarded(fn)` wraps a function that talks to Redis: it raises RedisUnavailable while Redis is
given a rest, and records a connection error or timeout as the start of one.
"""
from __future__ import annotations

import functools
import logging
import time

from django.conf import settings
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core import metrics

logger = logging.getLogger("gateway.redis")

# What Redis (directly, or through kombu) raises when it is down or does not answer in time.
OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError, KombuOperationalError, ConnectionError, TimeoutError,
                 OSError)


class RedisUnavailable(RedisConnectionError):
    """Redis failed a moment ago in this process: it is not asked again yet. A ConnectionError,
    so whoever handles Redis being down handles this too."""


class _State:
    resting_until = 0.0   # time.monotonic() before which Redis is not asked
    failures = 0          # errors since the last success, for the log


_state = _State()


def check() -> None:
    """Raise RedisUnavailable while Redis is given a rest after an error."""
    if _state.resting_until and time.monotonic() < _state.resting_until:
        raise RedisUnavailable("Redis failed less than %ss ago; not asked" % settings.REDIS_RETRY_AFTER_SECONDS)


def failed(exc: BaseException, what: str) -> None:
    """Record that `what` (the cache, the broker) failed with `exc`: Redis rests a while."""
    _state.resting_until = time.monotonic() + settings.REDIS_RETRY_AFTER_SECONDS
    _state.failures += 1
    metrics.redis_errors.labels(what).inc()
    if _state.failures == 1:
        logger.warning("Redis unreachable from the %s (%s: %s); rate limits and task publishing fail open, and "
                       "it is tried again every %ss", what, type(exc).__name__, exc, settings.REDIS_RETRY_AFTER_SECONDS)


def succeeded() -> None:
    if _state.failures:
        logger.warning("Redis answers again after %s failed attempts", _state.failures)
        _state.failures = 0
    _state.resting_until = 0.0


def guarded(what: str):
    """Decorator for a function that talks to Redis (see the module's docstring)."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            check()
            try:
                result = fn(*args, **kwargs)
            except OUTAGE_ERRORS as exc:
                if not isinstance(exc, RedisUnavailable):
                    failed(exc, what)
                raise
            if _state.failures:
                succeeded()
            return result

        return run

    return wrap


def reset() -> None:
    """Forget an outage (tests; a process that knows Redis is back)."""
    _state.resting_until, _state.failures = 0.0, 0
