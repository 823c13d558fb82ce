"""Acquirer health (payments.services.acquirer_health): an acquirer whose technical error rate
crosses the threshold leaves a method's rotation within 30 s, is probed every 30 s while out,
and is back within 2 minutes of answering again. Counted in the real Redis."""
from __future__ import annotations

import pytest

from payments.services import acquirer_health as health
from payments.services.acquirer_health import health_out, health_record, in_rotation_first

T0 = 1_800_000_000.0


def failing(name, method, at, calls=10):
    for _ in range(calls):
        health_record(name, method, failed=True, now=at)


def test_a_few_failures_or_a_low_rate_keep_it_in_rotation():
    failing("razorpay", "UPI", T0, calls=health.MIN_CALLS - 1)
    assert not health_out("razorpay", "UPI", now=T0)
    for _ in range(20):
        health_record("razorpay", "UPI", failed=False, now=T0)
    failing("razorpay", "UPI", T0, calls=5)
    assert not health_out("razorpay", "UPI", now=T0)


def test_failing_it_leaves_rotation_within_30_seconds_and_only_for_that_method():
    for second in range(0, 10):  # 20 payments/s, all failing from T0
        failing("razorpay", "UPI", T0 + second, calls=2)
    assert health_out("razorpay", "UPI", now=T0 + 1) is False  # the first to find it out probes it
    assert health_out("razorpay", "UPI", now=T0 + 1) is True   # out of rotation 1 s after the trouble began
    assert in_rotation_first(["razorpay", "cashfree"], "UPI", now=T0 + 10) == ["cashfree", "razorpay"]
    assert not health_out("razorpay", "CARD", now=T0 + 10) and not health_out("cashfree", "UPI", now=T0 + 10)


def test_while_out_one_payment_probes_it_each_probe_period(monkeypatch):
    failing("razorpay", "UPI", T0)
    probes = [not health_out("razorpay", "UPI", now=T0 + 1) for _ in range(50)]
    assert probes.count(True) == 1  # the first asker probes; the 49 others route around it


def test_recovered_it_is_back_within_two_minutes():
    failing("razorpay", "UPI", T0)
    health_out("razorpay", "UPI", now=T0)  # the probe
    assert health_out("razorpay", "UPI", now=T0 + 1)
    # It answers again from T0 + 1: the failures age out of the window.
    back = next(second for second in range(1, 121) if not health_out("razorpay", "UPI", now=T0 + second)
                and not health_out("razorpay", "UPI", now=T0 + second))
    assert back <= health.WINDOW_SECONDS + health.BUCKET_SECONDS


@pytest.mark.parametrize("names", [["razorpay"], ["cashfree", "razorpay"]])
def test_a_lone_acquirer_or_healthy_ones_keep_their_order(names):
    failing("razorpay", "NB", T0)
    assert in_rotation_first(["razorpay"], "NB") == ["razorpay"]
    assert in_rotation_first(["cashfree"], "NB") == ["cashfree"]
