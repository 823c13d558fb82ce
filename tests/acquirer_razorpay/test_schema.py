"""The schema of Razorpay's shapes (razorpay.schema.json) is derived from the vendored fixtures:
every fixture it stands for satisfies it, and it catches an answer that breaks what they show."""
from __future__ import annotations

import copy

import pytest

from tests.acquirer_razorpay.shapes import DERIVED_FROM, FIXTURES, fixture, shape_errors

CASES = [(kind, name) for kind, names in DERIVED_FROM.items() for name in names]


@pytest.mark.parametrize(("kind", "name"), CASES, ids=[f"{k}:{n}" for k, n in CASES])
def test_every_fixture_the_schema_was_derived_from_satisfies_it(kind, name):
    assert shape_errors(kind, fixture(name)) == []


def test_the_fixtures_named_are_vendored():
    assert all((FIXTURES / name).is_file() for _, name in CASES)


def test_an_amount_in_rupees_is_not_a_razorpay_payment():
    bad = fixture("fake_captured_payment.json") | {"amount": 5.5}
    assert any(error.startswith("amount") for error in shape_errors("payment", bad))


def test_an_unknown_status_is_caught():
    assert shape_errors("payment", fixture("fake_payment.json") | {"status": "SUCCESS"})
    assert shape_errors("refund", fixture("fake_refund.json") | {"status": "done"})
    assert shape_errors("order", fixture("fake_order.json") | {"status": "PAID"})


def test_a_webhook_must_carry_what_its_event_names():
    event = fixture("fake_payment_authorized_webhook.json")
    captured = copy.deepcopy(event) | {"event": "payment.captured"}
    assert shape_errors("event", captured) == []
    captured["payload"] = {}
    assert shape_errors("event", captured)
    failed = copy.deepcopy(event) | {"event": "payment.failed"}
    assert shape_errors("event", failed), "a payment.failed webhook with a captured payment is not Razorpay's"


def test_a_refund_processed_webhook_carries_a_processed_refund():
    refund = fixture("fake_refund.json")
    event = {"entity": "event", "event": "refund.processed", "contains": ["refund"],
             "payload": {"refund": {"entity": refund}}, "created_at": 1597078124}
    assert shape_errors("event", event) == []
    event["payload"]["refund"]["entity"] = refund | {"status": "pending"}
    assert shape_errors("event", event)


def test_an_s2s_answer_needs_the_payment_id():
    assert shape_errors("s2s_created", {"razorpay_payment_id": "pay_X", "link": "upi://pay?pa=a@b"}) == []
    assert shape_errors("s2s_created", {"link": "upi://pay?pa=a@b"})
    assert shape_errors("s2s_created", {"razorpay_payment_id": "pay_X", "link": "https://evil"})


def test_the_checkouts_answer_needs_a_hex_signature_of_its_order_and_payment():
    good = {"razorpay_payment_id": "pay_X", "razorpay_order_id": "order_Y", "razorpay_signature": "a" * 64}
    assert shape_errors("checkout_response", good) == []
    assert shape_errors("checkout_response", good | {"razorpay_signature": "not hex"})
    assert shape_errors("checkout_response", {k: v for k, v in good.items() if k != "razorpay_order_id"})
