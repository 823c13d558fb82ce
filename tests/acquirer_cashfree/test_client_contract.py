"""Every call of the Cashfree client, sent to Prism serving Cashfree's own description: the
`cashfree` fixture fails a test whose requests the description does not allow."""
from __future__ import annotations

import uuid

import pytest

from payments.acquirer.cashfree.client import API_VERSION, Customer, idempotency_key
from payments.acquirer.cashfree.errors import (
    CashfreeAuthenticationError,
    CashfreeBadRequest,
    CashfreeDeclined,
    CashfreeUnavailable,
)
from payments.cards import CardInput

from .conftest import SECRET, PrismClient

CUSTOMER = Customer(customer_id="cust_0001", phone="9876543210", email="asha@example.com",
                    name="Asha Rao")
CARD = CardInput(number="4111111111111111", expiry_month=7, expiry_year=2031, cvv="123")


def key() -> str:
    return str(uuid.uuid4())


def test_create_order_sends_rupees_and_reads_back_paise(cashfree):
    order = cashfree.create_order(order_id="pay_0001", amount=10050, customer=CUSTOMER,
                                  idempotency_key=key(), return_url="https://gw.example/return",
                                  notify_url="https://gw.example/cashfree/webhook", note="Order 1")
    sent = cashfree.exchanges[-1]
    assert (sent.method, sent.path, sent.status) == ("POST", "/orders", 200)
    assert sent.body["order_amount"] == 100.5
    assert sent.body["order_currency"] == "INR"
    # Prism answers the description's example order (₹22): read back as integer paise.
    assert order.amount == 2200
    assert order.payment_session_id and order.cf_order_id and order.status == "ACTIVE"


def test_every_call_carries_the_api_version_and_a_request_id(cashfree):
    cashfree.create_order(order_id="pay_0002", amount=100, customer=CUSTOMER, idempotency_key=key())
    cashfree.get_order("pay_0002")
    cashfree.get_payments("pay_0002")
    cashfree.pay_upi_qr(payment_session_id="session_x", idempotency_key=key())
    cashfree.create_refund(order_id="pay_0002", refund_id="rf_0002", amount=100, idempotency_key=key())
    cashfree.get_refund("pay_0002", "rf_0002")
    assert len(cashfree.exchanges) == 6
    for exchange in cashfree.exchanges:
        assert exchange.headers["x-api-version"] == API_VERSION
        uuid.UUID(exchange.headers["x-request-id"])


def test_every_create_carries_the_callers_idempotency_key(cashfree):
    keys = [key() for _ in range(3)]
    cashfree.create_order(order_id="pay_0003", amount=500, customer=CUSTOMER, idempotency_key=keys[0])
    cashfree.pay_upi_collect(payment_session_id="session_x", vpa="asha@okbank", idempotency_key=keys[1])
    cashfree.create_refund(order_id="pay_0003", refund_id="rf_0003", amount=500, idempotency_key=keys[2])
    assert [e.headers["x-idempotency-key"] for e in cashfree.exchanges] == keys


@pytest.mark.parametrize("bad_key", ["", "pay_0004-create"])
def test_a_create_without_a_uuid_idempotency_key_is_refused_before_sending(cashfree, bad_key):
    with pytest.raises(ValueError, match="idempotency key"):
        cashfree.create_order(order_id="pay_0004", amount=500, customer=CUSTOMER,
                              idempotency_key=bad_key)
    assert cashfree.exchanges == []


def test_idempotency_keys_derived_from_our_ids_are_stable_and_distinct():
    assert idempotency_key("pay_0004", "order") == idempotency_key("pay_0004", "order")
    keys = {idempotency_key("pay_0004", "order"), idempotency_key("pay_0004", "pay", "1"),
            idempotency_key("pay_0004", "pay", "2"), idempotency_key("pay_00", "04order")}
    assert len(keys) == 4
    assert all(uuid.UUID(k).version == 5 for k in keys)
    with pytest.raises(ValueError):
        idempotency_key()


@pytest.mark.parametrize("change, field", [
    (dict(order_id="ab"), "order_id"),
    (dict(order_id="o" * 46), "order_id"),
    (dict(amount=99), "100 paise"),
    (dict(customer=Customer(customer_id="c1", phone="9876543210")), "customer_id"),
    (dict(customer=Customer(customer_id="cust_1", phone="+919876543210")), "customer_phone"),
], ids=["short-order-id", "long-order-id", "under-a-rupee", "short-customer-id", "phone-with-code"])
def test_an_order_outside_the_descriptions_bounds_is_refused_before_sending(cashfree, change, field):
    order = dict(order_id="pay_0010", amount=100, customer=CUSTOMER, idempotency_key=key())
    with pytest.raises(ValueError, match=field):
        cashfree.create_order(**{**order, **change})
    assert cashfree.exchanges == []


def test_the_longest_ids_the_description_allows_are_sent(cashfree):
    cashfree.create_order(order_id="o" * 45, amount=100, idempotency_key=key(),
                          customer=Customer(customer_id="c" * 50, phone="9876543210"))
    cashfree.create_refund(order_id="o" * 45, refund_id="r" * 40, amount=100, idempotency_key=key())
    with pytest.raises(ValueError, match="refund_id"):
        cashfree.create_refund(order_id="o" * 45, refund_id="r" * 41, amount=100, idempotency_key=key())
    assert [e.status for e in cashfree.exchanges] == [200, 200]


def test_credentials_go_only_where_the_description_secures_the_call(cashfree):
    cashfree.get_order("pay_0005")
    cashfree.pay_upi_intent(payment_session_id="session_x", idempotency_key=key())
    read, pay = cashfree.exchanges
    assert read.headers["x-client-id"] == "TEST1234567890"
    assert read.headers["x-client-secret"] == SECRET
    assert "x-client-secret" not in pay.headers and "x-client-id" not in pay.headers


@pytest.mark.parametrize("pay, method", [
    (lambda c: c.pay_upi_collect(payment_session_id="s", vpa="asha@okbank", idempotency_key=key(),
                                 expiry_minutes=10), {"upi": {"channel": "collect", "upi_id": "asha@okbank",
                                                              "upi_expiry_minutes": 10}}),
    (lambda c: c.pay_upi_intent(payment_session_id="s", idempotency_key=key()), {"upi": {"channel": "link"}}),
    (lambda c: c.pay_upi_qr(payment_session_id="s", idempotency_key=key()), {"upi": {"channel": "qrcode"}}),
    (lambda c: c.pay_netbanking(payment_session_id="s", bank_code=3021, idempotency_key=key()),
     {"netbanking": {"channel": "link", "netbanking_bank_code": 3021}}),
    (lambda c: c.pay_wallet(payment_session_id="s", provider="phonepe", phone="9876543210",
                            idempotency_key=key()),
     {"app": {"channel": "link", "provider": "phonepe", "phone": "9876543210"}}),
    (lambda c: c.pay_bank_transfer(payment_session_id="s", idempotency_key=key()),
     {"banktransfer": {"channel": "link"}}),
], ids=["upi-collect", "upi-intent", "upi-qr", "netbanking", "wallet", "bank-transfer"])
def test_order_pay_for_each_method_is_allowed_by_the_description(cashfree, pay, method):
    answer = pay(cashfree)
    sent = cashfree.exchanges[-1]
    assert (sent.path, sent.status) == ("/orders/sessions", 200)
    assert sent.body == {"payment_session_id": "s", "payment_method": method}
    assert answer.cf_payment_id and answer.action


def test_card_pay_sends_the_card_for_3ds_on_the_issuers_page(cashfree):
    answer = cashfree.pay_card(payment_session_id="s", card=CARD, idempotency_key=key(),
                               holder_name="Asha Rao")
    sent = cashfree.exchanges[-1]
    assert sent.status == 200
    assert sent.body["payment_method"]["card"] == {
        "channel": "link", "card_number": "4111111111111111", "card_expiry_mm": "07",
        "card_expiry_yy": "31", "card_cvv": "123", "card_holder_name": "Asha Rao",
    }
    assert answer.cf_payment_id


def test_status_query_reads_each_payment_in_paise(cashfree):
    payments = cashfree.get_payments("pay_0006")
    assert cashfree.exchanges[-1].status == 200
    assert payments and all(isinstance(p.amount, int) for p in payments)
    assert {p.status for p in payments} <= {"SUCCESS", "NOT_ATTEMPTED", "FAILED", "USER_DROPPED",
                                             "VOID", "CANCELLED", "PENDING"}


def test_refund_is_created_in_rupees_and_read_back(cashfree):
    created = cashfree.create_refund(order_id="pay_0007", refund_id="rf_0007", amount=1,
                                     idempotency_key=key(), note="Returned item")
    assert cashfree.exchanges[-1].body == {"refund_amount": 0.01, "refund_id": "rf_0007",
                                           "refund_note": "Returned item"}
    fetched = cashfree.get_refund("pay_0007", "rf_0007")
    for refund in (created, fetched):
        assert refund.status in {"SUCCESS", "PENDING", "CANCELLED", "ONHOLD"}
        assert isinstance(refund.amount, int)


def test_ids_are_escaped_into_the_path(cashfree):
    cashfree.get_refund("pay 1/2", "rf?3")
    assert cashfree.exchanges[-1].path == "/orders/pay%201%2F2/refunds/rf%3F3"


@pytest.mark.parametrize("status, error", [
    (400, CashfreeBadRequest),
    (401, CashfreeAuthenticationError),
    (404, CashfreeBadRequest),
    (409, CashfreeBadRequest),
    (422, CashfreeBadRequest),
    (500, CashfreeUnavailable),
])
def test_cashfree_errors_map_to_three_kinds(cashfree, status, error):
    cashfree.prefer = f"code={status}"
    with pytest.raises(error) as raised:
        cashfree.create_order(order_id="pay_0008", amount=100, customer=CUSTOMER, idempotency_key=key())
    assert raised.value.status == status
    assert raised.value.request_id


def test_a_429_past_the_calls_time_is_limit_reached_with_the_seconds_to_wait(cashfree):
    """Prism's 429 says x-ratelimit-retry 4: one more try after it, then LimitReached (an
    AcquirerUnavailable) carrying the wait and Cashfree's request id."""
    from payments.acquirer.limits import LimitReached

    cashfree.prefer = "code=429"
    with pytest.raises(LimitReached) as raised:
        cashfree.create_order(order_id="pay_0008", amount=100, customer=CUSTOMER, idempotency_key=key())
    assert raised.value.retry_after >= 1 and "request id" in str(raised.value)


def test_a_bank_failure_on_pay_is_a_decline_and_on_a_read_is_unavailability(cashfree):
    cashfree.prefer = "code=502"
    with pytest.raises(CashfreeDeclined) as raised:
        cashfree.pay_upi_collect(payment_session_id="s", vpa="asha@okbank", idempotency_key=key())
    assert raised.value.code == "bank_processing_failure"
    with pytest.raises(CashfreeUnavailable):
        cashfree.get_payments("pay_0009")


def test_the_contract_check_catches_a_request_the_description_refuses(prism_url):
    """The fixture's check is not vacuous: an order under ₹1 is a violation Prism reports."""
    client = PrismClient(base_url=prism_url, client_id="TEST1234567890", client_secret=SECRET)
    with pytest.raises(CashfreeBadRequest):
        client._call("POST", "/orders", idempotency_key=key(), body={
            "order_amount": 0.5, "order_currency": "INR",
            "customer_details": {"customer_id": "cust_0001", "customer_phone": "9876543210"}})
    [exchange] = client.exchanges
    assert [v["location"] for v in exchange.request_violations] == [["request", "body", "order_amount"]]
