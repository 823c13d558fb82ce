"""Waiting for another process to do something, without timing assertions."""
import time


def wait_until(predicate, *, timeout: float = 30.0, interval: float = 0.1, message: str = ""):
    """Poll `predicate` until it returns something truthy and return that; AssertionError after
    `timeout` seconds (a generous bound: only a broken system reaches it)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(message or f"condition not met within {timeout} s")
        time.sleep(interval)
