"""The double holds itself to our schema of Razorpay's shapes: an answer or a webhook that breaks
it is recorded as a violation (and the razorpay_double fixture fails the test), so a double that
drifts from Razorpay's fixtures cannot make a test pass."""
from __future__ import annotations

import json
import urllib.request

import pytest

from tests.acquirer_razorpay.double import KEY_ID, KEY_SECRET, RazorpayDouble


@pytest.fixture
def double():
    started = RazorpayDouble().start()
    yield started
    started.stop()


def call(double, method, path, body=None):
    import base64

    request = urllib.request.Request(double.base_url + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", "Authorization": "Basic " +
                                              base64.b64encode(f"{KEY_ID}:{KEY_SECRET}".encode()).decode()})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_its_own_answers_satisfy_the_schema(double):
    status, order = call(double, "POST", "/orders", {"amount": 5000, "currency": "INR", "receipt": "T1", "notes": {}})
    assert status == 200 and order["id"].startswith("order_")
    assert call(double, "POST", "/orders", {"amount": 50, "currency": "INR"})[0] == 400
    assert call(double, "GET", "/orders/" + order["id"] + "/payments")[0] == 200
    assert double.violations == []


def test_an_order_answered_in_rupees_is_caught(double, monkeypatch):
    original = double._create_order

    def rupees(body):
        status, answer, kind = original(body)
        return status, {**answer, "amount": 50.5}, kind

    monkeypatch.setattr(double, "_create_order", rupees)
    call(double, "POST", "/orders", {"amount": 5050, "currency": "INR", "receipt": "T2"})
    assert any("amount" in violation for violation in double.violations), double.violations


def test_an_error_body_without_razorpays_code_is_caught(double, monkeypatch):
    monkeypatch.setattr(double, "_error_body", lambda description, code="X", field=None: {"message": description})
    call(double, "POST", "/orders", {"amount": 50, "currency": "INR"})
    assert double.violations


def test_a_payment_failed_webhook_of_a_captured_payment_is_caught(double):
    call(double, "POST", "/orders", {"amount": 5000, "currency": "INR", "receipt": "T3"})
    status, created = call(double, "POST", "/payments/create/upi", {
        "amount": 5000, "currency": "INR", "order_id": next(iter(double.orders)), "contact": "9876543210",
        "method": "upi", "upi": {"flow": "intent"}})
    assert status == 200 and created["link"].startswith("upi://")
    payment = double.settle_payment("T3", "captured", notify=False)
    double.signed(double.payment_webhook(payment, "payment.captured"))
    assert double.violations == []
    double.signed(double.payment_webhook(payment, "payment.failed"))
    assert any("webhook payment.failed" in violation for violation in double.violations)


def test_wrong_credentials_are_401_in_razorpays_error_shape(double):
    double.key_secret = "another"
    status, answer = call(double, "GET", "/orders")
    assert status == 401 and answer["error"]["code"] == "BAD_REQUEST_ERROR" and double.violations == []
