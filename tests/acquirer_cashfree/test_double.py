"""The Cashfree double itself: it keeps state like Cashfree, and every answer it gives through
the real client conforms to the description's response schemas (the fixture fails otherwise)."""
from __future__ import annotations

import pytest

from payments.acquirer.cashfree.client import CashfreeClient, Customer, idempotency_key
from payments.acquirer.cashfree.errors import (
    CashfreeAuthenticationError,
    CashfreeBadRequest,
    CashfreeUnavailable,
)
from payments.acquirer.cashfree.notices import verify_webhook
from payments.cards import CardInput
from tests.acquirer_cashfree.double import CLIENT_SECRET, cashfree_double, description  # noqa: F401

CUSTOMER = Customer(customer_id="cust_0001", phone="9876543210", email="asha@example.in", name="Asha")


@pytest.fixture
def client(cashfree_double):
    return CashfreeClient(base_url=cashfree_double.base_url, client_id=cashfree_double.client_id,
                          client_secret=CLIENT_SECRET, timeout=5)


def _order(client, order_id="TXN_DOUBLE_1", amount=10050):
    return client.create_order(order_id=order_id, amount=amount, customer=CUSTOMER,
                               idempotency_key=idempotency_key(order_id, "order"),
                               return_url="https://gw.example/return", notify_url="https://gw.example/hook")


def test_an_order_created_is_there_to_be_read_back(client, cashfree_double):
    created = _order(client)
    assert (created.amount, created.status) == (10050, "ACTIVE")
    read = client.get_order("TXN_DOUBLE_1")
    assert (read.cf_order_id, read.payment_session_id) == (created.cf_order_id, created.payment_session_id)
    assert client.get_payments("TXN_DOUBLE_1") == []


@pytest.mark.parametrize("pay, action", [
    (lambda c, s, k: c.pay_upi_collect(payment_session_id=s, vpa="asha@okbank", idempotency_key=k), "custom"),
    (lambda c, s, k: c.pay_upi_intent(payment_session_id=s, idempotency_key=k), "custom"),
    (lambda c, s, k: c.pay_upi_qr(payment_session_id=s, idempotency_key=k), "custom"),
    (lambda c, s, k: c.pay_card(payment_session_id=s, idempotency_key=k,
                                card=CardInput(number="4111111111111111", expiry_month=12, expiry_year=2030,
                                               cvv="123")), "link"),
    (lambda c, s, k: c.pay_netbanking(payment_session_id=s, bank_code=3021, idempotency_key=k), "link"),
    (lambda c, s, k: c.pay_wallet(payment_session_id=s, provider="phonepe", phone="9876543210",
                                  idempotency_key=k), "link"),
    (lambda c, s, k: c.pay_bank_transfer(payment_session_id=s, idempotency_key=k), "custom"),
])
def test_every_method_of_order_pay_starts_a_pending_payment(client, cashfree_double, pay, action):
    order = _order(client)
    answer = pay(client, order.payment_session_id, idempotency_key("TXN_DOUBLE_1", "pay", "1"))
    assert answer.action == action and answer.cf_payment_id
    [payment] = client.get_payments("TXN_DOUBLE_1")
    assert (payment.cf_payment_id, payment.status, payment.amount) == (answer.cf_payment_id, "PENDING", 10050)


def test_a_settled_payment_and_its_refund_read_back_as_cashfree_keeps_them(client, cashfree_double):
    order = _order(client)
    client.pay_upi_qr(payment_session_id=order.payment_session_id, idempotency_key=idempotency_key("q", "1"))
    cashfree_double.settle_payment("TXN_DOUBLE_1", "SUCCESS", notify=False, bank_reference="512345678901")
    [payment] = client.get_payments("TXN_DOUBLE_1")
    assert (payment.status, payment.bank_reference) == ("SUCCESS", "512345678901")
    assert client.get_order("TXN_DOUBLE_1").status == "PAID"

    refund = client.create_refund(order_id="TXN_DOUBLE_1", refund_id="rf_0001", amount=5000,
                                  idempotency_key=idempotency_key("rf_0001"))
    assert (refund.status, refund.amount) == ("PENDING", 5000)
    cashfree_double.settle_refund("TXN_DOUBLE_1", "rf_0001", "SUCCESS", notify=False)
    read = client.get_refund("TXN_DOUBLE_1", "rf_0001")
    assert (read.status, read.arn) == ("SUCCESS", f"ARN{refund.cf_refund_id}")
    with pytest.raises(CashfreeBadRequest, match="exceeds"):
        client.create_refund(order_id="TXN_DOUBLE_1", refund_id="rf_0002", amount=5051,
                             idempotency_key=idempotency_key("rf_0002"))


def test_a_create_asked_again_with_its_key_answers_the_first_answer(client, cashfree_double):
    order = _order(client)
    key = idempotency_key("TXN_DOUBLE_1", "pay", "1")
    first = client.pay_upi_qr(payment_session_id=order.payment_session_id, idempotency_key=key)
    again = client.pay_upi_qr(payment_session_id=order.payment_session_id, idempotency_key=key)
    assert again.cf_payment_id == first.cf_payment_id
    assert len(client.get_payments("TXN_DOUBLE_1")) == 1
    with pytest.raises(CashfreeBadRequest) as refused:
        client.pay_upi_intent(payment_session_id=order.payment_session_id, idempotency_key=key)
    assert (refused.value.status, refused.value.type) == (422, "idempotency_error")


def test_refusals_are_cashfree_s_error_answers(client, cashfree_double):
    with pytest.raises(CashfreeBadRequest) as missing:
        client.get_order("TXN_NOBODY")
    assert (missing.value.status, missing.value.code) == (404, "order_not_found")
    _order(client)
    with pytest.raises(CashfreeBadRequest) as twice:
        _order(client)  # the same key and body: the first answer again
        client.create_order(order_id="TXN_DOUBLE_1", amount=10050, customer=CUSTOMER,
                            idempotency_key=idempotency_key("TXN_DOUBLE_1", "order", "again"))
    assert twice.value.status == 409
    wrong = CashfreeClient(base_url=cashfree_double.base_url, client_id="someone", client_secret="else")
    with pytest.raises(CashfreeAuthenticationError):
        wrong.get_order("TXN_DOUBLE_1")
    cashfree_double.unavailable = True
    with pytest.raises(CashfreeUnavailable):
        client.get_payments("TXN_DOUBLE_1")
    statuses = {call.status for call in cashfree_double.calls}
    assert {200, 401, 404, 409, 500} <= statuses  # and each answer was checked (the fixture)


def test_its_webhooks_are_signed_as_cashfree_signs_them(client, cashfree_double, live_server_url):
    order = _order(client)
    client.pay_upi_qr(payment_session_id=order.payment_session_id, idempotency_key=idempotency_key("q", "1"))
    cashfree_double.webhook_url = live_server_url
    cashfree_double.settle_payment("TXN_DOUBLE_1", "SUCCESS")
    [delivery] = cashfree_double.deliveries
    payload = verify_webhook(secret=CLIENT_SECRET, headers=delivery.headers, raw_body=delivery.body)
    assert payload["type"] == "PAYMENT_SUCCESS_WEBHOOK"
    assert payload["data"]["payment"]["payment_status"] == "SUCCESS"


@pytest.fixture
def live_server_url():
    """A loopback server that accepts anything: the double's webhooks need somewhere to go."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Sink(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


# -- the checks can fail -------------------------------------------------------------------------

def test_an_answer_the_description_does_not_allow_is_caught():
    errors = description().response_errors("POST", "/orders", 200, {"order_amount": "100.50", "order_id": 7})
    assert any("order_amount" in error for error in errors) and any("order_id" in error for error in errors)
    assert description().response_errors("GET", "/orders/{order_id}/payments", 200, {"not": "a list"})
    refund = {"refund_status": "DONE", "entity": "refund"}
    assert description().response_errors("GET", "/orders/{order_id}/refunds/{refund_id}", 200, refund)
    assert description().response_errors("POST", "/orders", 418, {}) == [
        "POST /orders has no 418 answer in the description"]


def test_a_webhook_the_description_does_not_allow_is_caught():
    assert description().schema_errors("PaymentWebhook", {"data": {"payment": {"payment_status": "PAID"}}})
    assert description().schema_errors("RefundWebhook", {"data": {"refund": {"refund_amount": "1"}}})
    assert not description().schema_errors("PaymentWebhook", {"type": "PAYMENT_SUCCESS_WEBHOOK", "data": {}})


def test_the_double_records_a_violation_of_its_own(cashfree_double):
    cashfree_double._check("GET /orders/{order_id} -> 200",
                           description().response_errors("GET", "/orders/{order_id}", 200, {"order_amount": "x"}))
    assert cashfree_double.violations
    cashfree_double.violations.clear()  # the fixture would fail this test otherwise
