"""payments.acquirer.limits under a burst, on the real Redis the tests run against: calls that do
not fit are refused without ever holding a slot, so the call that finishes work already started
(an order's pay, asking with the whole window) finds the room kept for it.

CI once failed tests/acquirer_cashfree/test_burst.py with no payment made at all: every order's pay
was refused while new orders, refused themselves, were counted for the moment between their
INCR and their DECR."""
from __future__ import annotations

import threading
import time

import pytest
from django.core.cache import cache

from payments.acquirer.limits import LimitReached, call_permit

MOMENT = 1_900_000_000.25  # a fixed moment, so the window cannot turn during the test
PER_MINUTE = 12  # two calls a ten-second window; a new order may take the first only


def _permit(account, share):
    return call_permit(account, calls_per_minute=PER_MINUTE, share=share, deadline=time.monotonic(),
                       now=lambda: MOMENT)


def test_refused_new_orders_never_take_the_slot_an_orders_pay_is_kept(settings):
    if not hasattr(cache, "take"):
        pytest.skip("the outbound limit is shared through Redis; this run has no REDIS_URL")
    refusals_seen = 0
    for attempt in range(60):
        account = f"burst-{time.time_ns()}-{attempt}"
        _permit(account, 0.5)  # one new order took the window's first slot
        stop = threading.Event()

        def new_orders():
            nonlocal refusals_seen
            while not stop.is_set():
                with pytest.raises(LimitReached):
                    _permit(account, 0.5)
                refusals_seen += 1

        crowd = [threading.Thread(target=new_orders) for _ in range(6)]
        for thread in crowd:
            thread.start()
        try:
            time.sleep(0.002)
            _permit(account, 1.0)  # the order's pay: the window's second slot is its own
        finally:
            stop.set()
            for thread in crowd:
                thread.join()
        with pytest.raises(LimitReached):  # and the window is then full for everyone
            _permit(account, 1.0)
    assert refusals_seen > 60  # the crowd did press on the window throughout
