"""Two acquirers side by side, for the tests of routing, failover, health and what follows from
them: Cashfree configured (the default), Razorpay enabled beside it, both stateful doubles
running. A test module imports `both` with the doubles' fixtures it depends on:

    from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
    from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
    from tests.support.two_acquirers import both  # noqa: F401 - a fixture
"""
from __future__ import annotations

import pytest

from payments.services.acquirer_health import health_record


@pytest.fixture
def both(settings, cashfree_double, razorpay_double):
    """Cashfree configured (the default), Razorpay enabled beside it: both doubles running."""
    from payments.acquirer import _load

    settings.GATEWAY_ACQUIRER = "cashfree"
    settings.GATEWAY_ACQUIRERS = ["cashfree", "razorpay"]
    _load.cache_clear()
    return cashfree_double, razorpay_double


def failing(name: str, method: str, calls: int = 10) -> None:
    """`calls` technical failures of `name` for `method` in the health counts (real Redis)."""
    for _ in range(calls):
        health_record(name, method, failed=True)
