"""Waiting for another process (a Celery worker, a web server, a merchant's receiver) to do
something, without timing assertions. The one copy for the tests and the benchmarks: it needs
nothing but the standard library, so benchmarks/stack.py imports it without Django."""
from __future__ import annotations

import time
from typing import Callable


class TimedOut(AssertionError, RuntimeError):
    """The condition was not met in time. An AssertionError, so that pytest reports a failed
    check; a RuntimeError, so that the benchmarks, which only warn and carry on, catch it."""


def wait_until(predicate: Callable, timeout: float = 30.0, message: str | Callable[[], str] = "", *,
               interval: float = 0.1):
    """Poll `predicate` until it returns something truthy and return that. After `timeout`
    seconds (a generous bound that only a broken system reaches) raise TimedOut with `message`,
    which may be a callable, called only then (to include a log's tail, say)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            text = message() if callable(message) else message
            raise TimedOut(f"timed out after {timeout:g} s: {text or 'condition not met'}")
        time.sleep(interval)
