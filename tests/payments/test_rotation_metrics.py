"""Routing's metrics (issue 33; docs/decisions.md D24): a failover counted by from, to, method and
class; a payment routed past an out-of-rotation acquirer and a probe counted; the rotation
sweep setting the out-of-rotation gauge from health without taking a probe."""
from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from payments.models import AcquirerRoute, Payment
from payments.services.acquirer_health import health_out, in_rotation_first
from payments.services.upi import hosted_upi_intent
from payments.tasks import acquirer_rotation_sweep
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
from tests.support.two_acquirers import both, failing  # noqa: F401 - a fixture
from tests.payments.s2s.conftest import s2s_merchant  # noqa: F401 - a fixture
from tests.support.factories import make_payment

pytestmark = pytest.mark.django_db


def value(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0




def test_a_failover_is_counted_by_from_to_method_and_class(both, s2s_merchant):  # noqa: F811
    cashfree, razorpay = both
    merchant = s2s_merchant.merchant
    AcquirerRoute.objects.create(merchant_id=merchant.pk, method="UPI", acquirers="razorpay,cashfree")
    payment = make_payment(merchant, status=Payment.Status.PENDING, amount=25000)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="9876543210", customer_email="asha@example.in")
    labels = {"from_acquirer": "razorpay", "to_acquirer": "cashfree", "method": "UPI", "reason": "unavailable"}
    before = value("gateway_acquirer_failovers_total", **labels)
    razorpay.unavailable = True
    assert hosted_upi_intent(payment_id=payment.pk).acquirer == "cashfree"
    assert value("gateway_acquirer_failovers_total", **labels) == before + 1


def test_routing_past_an_out_of_rotation_acquirer_and_its_probe_are_counted():
    failing("razorpay", "NB")
    past = value("gateway_acquirer_routed_past_total", acquirer="razorpay", method="NB")
    probes = value("gateway_acquirer_probes_total", acquirer="razorpay", method="NB")
    assert in_rotation_first(["razorpay", "cashfree"], "NB") == ["razorpay", "cashfree"]  # the probe
    assert in_rotation_first(["razorpay", "cashfree"], "NB") == ["cashfree", "razorpay"]
    assert value("gateway_acquirer_probes_total", acquirer="razorpay", method="NB") == probes + 1
    assert value("gateway_acquirer_routed_past_total", acquirer="razorpay", method="NB") == past + 1


def test_the_rotation_sweep_sets_the_gauge_and_takes_no_probe(both):
    failing("razorpay", "UPI")
    assert acquirer_rotation_sweep() == 1
    assert value("gateway_acquirer_out_of_rotation", acquirer="razorpay", method="UPI") == 1
    assert value("gateway_acquirer_out_of_rotation", acquirer="cashfree", method="UPI") == 0
    assert REGISTRY.get_sample_value("gateway_acquirer_out_of_rotation", {"acquirer": "razorpay", "method": "CARD"}) == 0
    assert health_out("razorpay", "UPI") is False  # the probe is still there for a payment
    from django.core.cache import cache
    cache.clear()
    acquirer_rotation_sweep()
    assert value("gateway_acquirer_out_of_rotation", acquirer="razorpay", method="UPI") == 0
