"""CashfreeAcquirer, the gateway's Acquirer protocol over Cashfree: every request it sends goes
to Prism serving Cashfree's own description (the `cashfree` fixture fails a test on any
request Prism reports as a violation).

Prism answers the description's examples, whatever was asked (an order of ₹22, a payment list
whose first payment is a UPI SUCCESS). Where a test needs another answer (a UPI intent link, a
payment still PENDING) the request still goes through Prism, and `ScriptedPrism` puts the
scripted answer in place of Prism's example.
"""
from __future__ import annotations

import json
import logging
import uuid

import pytest

from payments.acquirer.base import AcquirerAnswer, AcquirerError, AcquirerRefused, AcquirerUnavailable, Outcome
from payments.acquirer.cashfree.acquirer import METHODS, CashfreeAcquirer
from payments.acquirer.cashfree.client import idempotency_key
from payments.cards import CardInput
from payments.models import Payment

from .conftest import SECRET, PrismClient

PRISM_ORDER_AMOUNT = 2200  # the description's example order is ₹22
CARD_NUMBER, CVV = "4111111111111111", "739"
CARD = CardInput(number=CARD_NUMBER, expiry_month=7, expiry_year=2031, cvv=CVV)
INTENT = {"default": "upi://pay?pa=cf.merchant@axis&pn=Asha&am=22.00&cu=INR&tr=CF91235",
          "gpay": "tez://upi/pay?pa=cf.merchant@axis&am=22.00"}


class ScriptedPrism(PrismClient):
    """Prism, with some answers replaced: `script[(method, path)] = (status, body)`, and
    `prefer_for[path] = "code=..."` to ask Prism for an error on one path only. The request
    is sent to Prism and checked against the description either way."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.script: dict[tuple[str, str], tuple[int, object]] = {}
        self.prefer_for: dict[str, str] = {}

    def _exchange(self, method, path, headers, payload):
        self.prefer = self.prefer_for.get(path, "")
        status, response_headers, data = super()._exchange(method, path, headers, payload)
        scripted = self.script.get((method, path))
        if scripted is not None:
            status, body = scripted
            data = json.dumps(body).encode()
        return status, response_headers, data


@pytest.fixture
def cashfree(prism_url):
    """The conftest's `cashfree`, scriptable: the same checks after the test."""
    client = ScriptedPrism(base_url=prism_url, client_id="TEST1234567890", client_secret=SECRET, timeout=10)
    yield client
    bad = [(e.method, e.path, e.request_violations) for e in client.exchanges if e.request_violations]
    assert not bad, f"requests Cashfree's description does not allow: {bad}"
    odd = [(e.method, e.path, e.unexplained_response_violations)
           for e in client.exchanges if e.unexplained_response_violations and (e.method, e.path) not in client.script]
    assert not odd, f"response violations not among the description's known defects: {odd}"


@pytest.fixture
def acquirer(cashfree):
    return CashfreeAcquirer(cashfree)


def a_payment(**fields) -> Payment:
    """A payment as the gateway hands it to the acquirer (unsaved: the adapter reads fields only)."""
    values = dict(merchant_id=7, flow=Payment.Flow.HOSTED, merchant_txn_id="ORD-1", amount=PRISM_ORDER_AMOUNT,
                  status=Payment.Status.PROCESSING, customer_name="Asha Rao", customer_email="asha@example.com",
                  customer_phone="+91 98765 43210", attempt=1, description="Tea")
    values.update(fields)
    return Payment(**values)


def payments_list(*entries: tuple[str, str, str, str]) -> list[dict]:
    """A get-payments answer: (cf_payment_id, payment_status, payment_group, bank_reference)."""
    return [{"cf_payment_id": pid, "order_id": "x", "payment_status": status, "payment_group": group,
             "payment_amount": 22, "bank_reference": ref, "payment_message": f"{status.lower()} at the bank",
             "payment_time": f"2026-11-26T10:0{i}:00+05:30"}
            for i, (pid, status, group, ref) in enumerate(entries)]


def sent(cashfree, method: str, path: str):
    return [e for e in cashfree.exchanges if (e.method, e.path) == (method, path)]


# -- the order --------------------------------------------------------------------------------

def test_the_order_is_our_txn_id_and_every_create_carries_a_key_derived_from_our_ids(acquirer, cashfree):
    payment = a_payment()
    back = f"https://pay.example.com/checkout/{payment.payment_id}/back"
    acquirer.upi_collect(payment=payment, vpa="Asha@OkBank", return_url=back)
    order, pay = cashfree.exchanges
    assert (order.method, order.path, pay.path) == ("POST", "/orders", "/orders/sessions")
    assert order.body["order_id"] == payment.sabpaisa_txn_id
    assert order.body["order_amount"] == 22
    assert order.body["customer_details"]["customer_phone"] == "9876543210"
    assert order.body["order_meta"] == {"return_url": back}  # the service's address, passed in
    assert order.headers["x-idempotency-key"] == idempotency_key(payment.sabpaisa_txn_id, "order")
    assert pay.headers["x-idempotency-key"] == idempotency_key(payment.sabpaisa_txn_id, "upi_collect", "1",
                                                              "asha@okbank")
    assert pay.body["payment_method"] == {"upi": {"channel": "collect", "upi_id": "asha@okbank"}}
    assert "x-client-secret" in order.headers and "x-client-secret" not in pay.headers


def test_asking_again_sends_the_same_keys_so_cashfree_answers_instead_of_acting_twice(acquirer, cashfree):
    payment = a_payment()
    acquirer.upi_collect(payment=payment, vpa="asha@okbank")
    acquirer.upi_collect(payment=payment, vpa="asha@okbank")
    keys = [e.headers["x-idempotency-key"] for e in cashfree.exchanges]
    assert keys[:2] == keys[2:] and len(set(keys)) == 2


def test_an_order_that_exists_already_is_read_back(acquirer, cashfree):
    cashfree.prefer_for["/orders"] = "code=409"
    payment = a_payment()
    answer = acquirer.upi_collect(payment=payment, vpa="asha@okbank")
    assert answer.outcome == Outcome.PENDING
    assert [(e.method, e.path) for e in cashfree.exchanges] == [
        ("POST", "/orders"), ("GET", f"/orders/{payment.sabpaisa_txn_id}"), ("POST", "/orders/sessions")]


def test_an_order_for_another_amount_is_refused_rather_than_paid(acquirer, cashfree):
    with pytest.raises(AcquirerError, match="2200 paise, not 5000"):
        acquirer.upi_collect(payment=a_payment(amount=5000), vpa="asha@okbank")
    assert len(cashfree.exchanges) == 1  # no order pay


def test_optional_customer_fields_outside_the_descriptions_bounds_are_left_out(acquirer, cashfree):
    acquirer.upi_collect(payment=a_payment(customer_name="Al", customer_email="a" * 95 + "@x.com",
                                           description="ab"), vpa="asha@okbank")
    order = cashfree.exchanges[0].body
    assert "customer_name" not in order["customer_details"] and "customer_email" not in order["customer_details"]
    assert "order_note" not in order


@pytest.mark.parametrize("phone", ["", "12345", "+1 415 555 0100"])
def test_a_customer_without_an_indian_mobile_number_is_refused_before_sending(acquirer, cashfree, phone):
    with pytest.raises(AcquirerRefused, match="10-digit"):
        acquirer.upi_collect(payment=a_payment(customer_phone=phone), vpa="asha@okbank")
    assert cashfree.exchanges == []


# -- UPI ----------------------------------------------------------------------------------------

def test_s2s_registration_answers_cashfrees_own_upi_link(acquirer, cashfree):
    cashfree.script[("POST", "/orders/sessions")] = (200, {
        "cf_payment_id": "91235", "payment_method": "upi", "channel": "link", "action": "custom",
        "payment_amount": 22, "data": {"url": None, "payload": INTENT}})
    payment = a_payment(flow=Payment.Flow.S2S, attempt=0, s2s_mode=Payment.S2SMode.UPI_QR)
    answer = acquirer.upi_register(payment=payment)
    assert answer.outcome == Outcome.PENDING
    assert answer.link == INTENT["default"]
    assert answer.raw["cf_payment_id"] == "91235"
    assert sent(cashfree, "POST", "/orders/sessions")[0].body["payment_method"] == {"upi": {"channel": "link"}}


def test_s2s_registration_without_a_upi_link_in_the_answer_is_a_processing_error(acquirer, cashfree):
    # Prism's example order pay answer is a card's: no upi:// link to give the merchant.
    with pytest.raises(AcquirerError) as raised:
        acquirer.upi_register(payment=a_payment(flow=Payment.Flow.S2S, attempt=0))
    assert type(raised.value) is AcquirerError
    assert "no upi:// link" in str(raised.value)


def test_a_upi_pay_from_a_vpa_is_a_collect_request_to_it(acquirer, cashfree):
    answer = acquirer.upi_pay(payment=a_payment(), payer_vpa="asha@okbank")
    assert answer.outcome == Outcome.PENDING and answer.raw["cf_payment_id"]
    assert cashfree.exchanges[-1].body["payment_method"]["upi"] == {"channel": "collect", "upi_id": "asha@okbank"}


def test_upi_status_is_cashfrees_status_query(acquirer, cashfree):
    payment = a_payment()
    path = f"/orders/{payment.sabpaisa_txn_id}/payments"
    # Prism's example list: a UPI payment in SUCCESS.
    answer = acquirer.upi_status(payment=payment, payer_vpa="rohit@xcxcx")
    assert (answer.outcome, answer.reference) == (Outcome.APPROVED, "P78112898712")
    cashfree.script[("GET", path)] = (200, payments_list(("1", "PENDING", "upi", "")))
    assert acquirer.upi_status(payment=payment, payer_vpa="asha@okbank").outcome == Outcome.PENDING
    cashfree.script[("GET", path)] = (200, payments_list(("1", "FAILED", "upi", "")))
    assert acquirer.upi_status(payment=payment, payer_vpa="asha@okbank").outcome == Outcome.DECLINED
    cashfree.script[("GET", path)] = (200, payments_list(("1", "FAILED", "credit_card", "")))
    with pytest.raises(AcquirerRefused):  # no UPI request on the order: it never arrived
        acquirer.upi_status(payment=payment, payer_vpa="asha@okbank")
    assert {(e.method, e.path) for e in cashfree.exchanges} == {("GET", path)}


def test_upi_cancel_answers_an_approval_that_came_first_and_otherwise_cannot_cancel(acquirer, cashfree):
    payment = a_payment()
    path = f"/orders/{payment.sabpaisa_txn_id}/payments"
    assert acquirer.upi_cancel(payment=payment, payer_vpa="rohit@xcxcx").outcome == Outcome.APPROVED
    cashfree.script[("GET", path)] = (200, payments_list(("1", "PENDING", "upi", "")))
    with pytest.raises(AcquirerError, match="cannot cancel"):
        acquirer.upi_cancel(payment=payment, payer_vpa="asha@okbank")


# -- cards: 3-D Secure on the issuer's page, confirmed by the status query ------------------------

def test_a_card_payment_is_a_challenge_on_the_issuers_page(acquirer, cashfree):
    answer = acquirer.card_authorize(payment=a_payment(), card=CARD)
    assert answer.outcome == Outcome.CHALLENGE
    assert answer.reference == "91235"  # Cashfree's cf_payment_id: what card_verify_otp asks about
    assert answer.link.startswith("https://sandbox.cashfree.com/pg/view/gateway/")
    card = sent(cashfree, "POST", "/orders/sessions")[0].body["payment_method"]["card"]
    assert (card["card_number"], card["card_cvv"], card["channel"]) == (CARD_NUMBER, CVV, "link")


def test_the_return_from_the_issuers_page_is_confirmed_by_the_status_query_not_the_otp(acquirer, cashfree):
    payment = a_payment(card_challenge_ref="91235")
    path = f"/orders/{payment.sabpaisa_txn_id}/payments"
    cashfree.script[("GET", path)] = (200, payments_list(("91235", "SUCCESS", "credit_card", "BANKREF1")))
    approved = acquirer.card_verify_otp(payment=payment, otp="anything", challenge_ref="91235")
    assert (approved.outcome, approved.reference) == (Outcome.APPROVED, "BANKREF1")
    cashfree.script[("GET", path)] = (200, payments_list(("91235", "FAILED", "credit_card", "")))
    assert acquirer.card_verify_otp(payment=payment, otp="123456", challenge_ref="91235").outcome == Outcome.DECLINED
    # Not final at Cashfree yet: nothing is decided, the payment stays PROCESSING for the sweep.
    cashfree.script[("GET", path)] = (200, payments_list(("91235", "PENDING", "credit_card", "")))
    with pytest.raises(AcquirerUnavailable, match="not final"):
        acquirer.card_verify_otp(payment=payment, otp="123456", challenge_ref="91235")
    with pytest.raises(AcquirerUnavailable):
        acquirer.call_status(payment=payment, step="card_verify_otp")
    # Another card attempt of the order is not this challenge.
    cashfree.script[("GET", path)] = (200, payments_list(("555", "FAILED", "credit_card", "")))
    with pytest.raises(AcquirerRefused):
        acquirer.call_status(payment=payment, step="card_verify_otp")
    assert acquirer.card_verify_otp(payment=payment, otp="1", challenge_ref="").outcome == Outcome.DECLINED


def test_card_numbers_and_cvvs_are_never_logged_nor_in_an_answer_nor_in_an_error(acquirer, cashfree, caplog):
    caplog.set_level(logging.DEBUG)
    answer = acquirer.card_authorize(payment=a_payment(), card=CARD)
    cashfree.prefer_for["/orders/sessions"] = "code=400"
    with pytest.raises(AcquirerRefused) as refused:
        acquirer.card_authorize(payment=a_payment(), card=CARD)
    cashfree.prefer_for["/orders/sessions"] = "code=502"
    declined = acquirer.card_authorize(payment=a_payment(), card=CARD)
    assert declined.outcome == Outcome.DECLINED
    assert caplog.records, "the calls were logged"
    for text in (caplog.text, json.dumps(answer.raw), json.dumps(declined.raw), str(refused.value),
                 repr(answer), repr(declined)):
        assert CARD_NUMBER not in text and CARD_NUMBER[-10:] not in text
        assert f'"{CVV}"' not in text and f"'{CVV}'" not in text
    assert answer.raw["last4"] == "1111"


# -- net banking, wallets, NEFT / RTGS -----------------------------------------------------------

@pytest.mark.parametrize("mode, code, method", [
    ("NB", "HDFC", {"netbanking": {"channel": "link", "netbanking_bank_code": 3021}}),
    ("NB", "SBIN", {"netbanking": {"channel": "link", "netbanking_bank_code": 3044}}),
    ("WALLET", "PHONEPE", {"app": {"channel": "link", "provider": "phonepe", "phone": "9876543210"}}),
    ("WALLET", "AMAZONPAY", {"app": {"channel": "link", "provider": "amazon", "phone": "9876543210"}}),
])
def test_net_banking_and_wallets_send_the_customer_to_cashfrees_page(acquirer, cashfree, mode, code, method):
    answer = acquirer.bank_redirect(payment=a_payment(), mode=mode, bank_code=code)
    assert answer.outcome == Outcome.PENDING and answer.link.startswith("https://")
    assert sent(cashfree, "POST", "/orders/sessions")[0].body["payment_method"] == method


def test_a_bank_cashfree_does_not_know_is_refused_before_sending(acquirer, cashfree):
    with pytest.raises(AcquirerRefused):
        acquirer.bank_redirect(payment=a_payment(), mode="NB", bank_code="XXXX")
    assert cashfree.exchanges == []


def test_the_bank_pages_answer_is_not_trusted_the_status_query_decides(acquirer, cashfree):
    payment = a_payment(payment_mode=Payment.Mode.NB)
    path = f"/orders/{payment.sabpaisa_txn_id}/payments"
    cashfree.script[("GET", path)] = (200, payments_list(("7", "FAILED", "net_banking", "")))
    # The page said yes; Cashfree says the bank declined: DECLINED.
    assert acquirer.bank_authorize(payment=payment, bank_code="HDFC", approved=True).outcome == Outcome.DECLINED
    cashfree.script[("GET", path)] = (200, payments_list(("7", "SUCCESS", "wallet", "W1")))
    answer = acquirer.bank_authorize(payment=payment, bank_code="PHONEPE", approved=False)
    assert (answer.outcome, answer.reference) == (Outcome.APPROVED, "W1")
    cashfree.script[("GET", path)] = (200, [])
    assert acquirer.bank_authorize(payment=payment, bank_code="HDFC", approved=False).outcome == Outcome.DECLINED
    with pytest.raises(AcquirerRefused):
        acquirer.bank_authorize(payment=payment, bank_code="HDFC", approved=True)
    with pytest.raises(AcquirerRefused):
        acquirer.call_status(payment=payment, step="bank_authorize")


TRANSFER_ANSWER = (200, {"cf_payment_id": "8", "payment_method": "banktransfer", "channel": "link",
                         "action": "custom", "payment_amount": 22,
                         "data": {"url": None, "payload": {"account_number": "026291800001191",
                                                           "ifsc": "YESB0000262", "bank_name": "Yes Bank"}}})


def test_a_bank_transfer_answer_without_an_account_is_an_error_not_a_place_to_pay(acquirer, cashfree):
    # Prism's own example answer is a card's (a link, no account).
    with pytest.raises(AcquirerError, match="no account number"):
        acquirer.transfer_details(payment=a_payment(payment_mode=Payment.Mode.NEFT))


def test_neft_and_rtgs_are_a_bank_transfer_credited_when_cashfree_says_so(acquirer, cashfree):
    payment = a_payment(payment_mode=Payment.Mode.NEFT)
    cashfree.script[("POST", "/orders/sessions")] = TRANSFER_ANSWER
    account = acquirer.transfer_details(payment=payment)
    assert (account.account, account.ifsc, account.bank) == ("026291800001191", "YESB0000262", "Yes Bank")
    assert sent(cashfree, "POST", "/orders/sessions")[0].body["payment_method"] == {"banktransfer": {"channel": "link"}}
    path = f"/orders/{payment.sabpaisa_txn_id}/payments"
    cashfree.script[("GET", path)] = (200, payments_list(("8", "PENDING", "bank_transfer", "")))
    with pytest.raises(AcquirerUnavailable):
        acquirer.transfer_received(payment=payment, amount=payment.amount)
    cashfree.script[("GET", path)] = (200, payments_list(("8", "SUCCESS", "bank_transfer", "UTR123")))
    answer = acquirer.transfer_received(payment=payment, amount=payment.amount)
    assert (answer.outcome, answer.reference) == (Outcome.APPROVED, "UTR123")


def test_cashfree_carries_every_method_but_the_cash_challan(acquirer):
    assert METHODS == {"UPI", "CARD", "NB", "WALLET", "NEFT", "RTGS"}
    assert acquirer.supports("CARD") and not acquirer.supports("CHALLAN")


# -- refunds and reversals ----------------------------------------------------------------------

def test_a_refund_is_created_with_our_refund_id_and_key(acquirer, cashfree):
    payment = a_payment(status=Payment.Status.SUCCESS)
    answer = acquirer.refund(payment=payment, amount=1050, refund_id="rfnd_0001")
    # The reference is the bank's refund reference (the ARN) where Cashfree gives one, as a
    # refund webhook's is (payments.acquirer.cashfree.answers).
    assert (answer.outcome, answer.reference) == (Outcome.APPROVED, "RF12312")
    [created] = cashfree.exchanges
    assert created.path == f"/orders/{payment.sabpaisa_txn_id}/refunds"
    assert created.body == {"refund_amount": 10.5, "refund_id": "rfnd_0001"}
    assert created.headers["x-idempotency-key"] == idempotency_key(payment.sabpaisa_txn_id, "refund", "rfnd_0001")


@pytest.mark.parametrize("ours", ["r", "R" * 41, "a-" * 32])
def test_a_refund_id_outside_cashfrees_bounds_is_sent_as_a_stable_id_derived_from_it(acquirer, cashfree, ours):
    payment = a_payment(status=Payment.Status.SUCCESS)
    acquirer.refund(payment=payment, amount=100, refund_id=ours)
    acquirer.refund(payment=payment, amount=100, refund_id=ours)
    first, again = (e.body["refund_id"] for e in cashfree.exchanges)
    assert first == again and 3 <= len(first) <= 40 and first != ours
    assert cashfree.exchanges[0].headers["x-idempotency-key"] == cashfree.exchanges[1].headers["x-idempotency-key"]


def test_a_pending_refund_is_read_as_it_stands_now(acquirer, cashfree):
    payment = a_payment(status=Payment.Status.SUCCESS)
    refunds = f"/orders/{payment.sabpaisa_txn_id}/refunds"
    pending = {"cf_payment_id": "1", "cf_refund_id": "77", "refund_id": "rfnd_2", "order_id": "x",
               "refund_amount": 10.5, "refund_currency": "INR", "refund_status": "PENDING"}
    cashfree.script[("POST", refunds)] = (200, pending)
    cashfree.script[("GET", refunds + "/rfnd_2")] = (200, pending)
    assert acquirer.refund(payment=payment, amount=1050, refund_id="rfnd_2").outcome == Outcome.PENDING
    cashfree.script[("GET", refunds + "/rfnd_2")] = (200, {**pending, "refund_status": "SUCCESS"})
    assert acquirer.refund(payment=payment, amount=1050, refund_id="rfnd_2").outcome == Outcome.APPROVED
    cashfree.script[("GET", refunds + "/rfnd_2")] = (200, {**pending, "refund_status": "CANCELLED"})
    assert acquirer.refund(payment=payment, amount=1050, refund_id="rfnd_2").outcome == Outcome.DECLINED


def test_a_refund_refused_by_cashfree_is_read_back_or_declined(acquirer, cashfree):
    payment = a_payment(status=Payment.Status.SUCCESS)
    refunds = f"/orders/{payment.sabpaisa_txn_id}/refunds"
    cashfree.prefer_for[refunds] = "code=409"  # refund id used before: the first one stands
    assert acquirer.refund(payment=payment, amount=1050, refund_id="rfnd_3").outcome == Outcome.APPROVED
    cashfree.prefer_for[refunds + "/rfnd_3"] = "code=404"  # ... and when it cannot be read either
    answer = acquirer.refund(payment=payment, amount=1050, refund_id="rfnd_3")
    assert answer.outcome == Outcome.DECLINED and "HTTP 404" in answer.message
    cashfree.prefer_for[refunds] = "code=400"  # refused outright (more than was paid, say)
    answer = acquirer.refund(payment=payment, amount=1050, refund_id="rfnd_4")
    assert answer.outcome == Outcome.DECLINED and "HTTP 400" in answer.message


def test_a_reversal_is_a_refund_of_the_whole_approval(acquirer, cashfree):
    payment = a_payment(status=Payment.Status.EXPIRED)
    answer = acquirer.reverse(payment=payment, bank_rrn="P78112898712", amount=2200, reversal_id="rev_42_1")
    assert answer.outcome == Outcome.APPROVED and answer.reference
    assert answer.raw["approval"] == "P78112898712"
    assert cashfree.exchanges[0].body == {"refund_amount": 22, "refund_id": "rev_42_1"}


# -- errors ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("status, error", [
    (400, AcquirerRefused), (404, AcquirerRefused), (422, AcquirerRefused),
    (401, AcquirerError), (429, AcquirerUnavailable), (500, AcquirerUnavailable),
], ids=lambda value: str(value) if isinstance(value, int) else value.__name__)
def test_cashfree_errors_map_to_the_protocols_three(acquirer, cashfree, status, error):
    cashfree.prefer_for["/orders"] = f"code={status}"
    with pytest.raises(error) as raised:
        acquirer.upi_register(payment=a_payment(flow=Payment.Flow.S2S, attempt=0))
    assert type(raised.value) is error
    assert "request id" in str(raised.value)


def test_a_bank_failure_on_order_pay_is_a_decline_not_an_error(acquirer, cashfree):
    cashfree.prefer_for["/orders/sessions"] = "code=502"
    answer = acquirer.upi_collect(payment=a_payment(), vpa="asha@okbank")
    assert isinstance(answer, AcquirerAnswer) and answer.outcome == Outcome.DECLINED
    with pytest.raises(AcquirerRefused):  # S2S: a start the bank refuses is PAYMENT_FAILED
        acquirer.upi_register(payment=a_payment(flow=Payment.Flow.S2S, attempt=0))


def test_a_status_query_of_an_order_cashfree_does_not_know_finds_no_such_call(acquirer, cashfree):
    payment = a_payment()
    cashfree.prefer_for[f"/orders/{payment.sabpaisa_txn_id}/payments"] = "code=404"
    with pytest.raises(AcquirerRefused):
        acquirer.call_status(payment=payment, step="card_verify_otp")


def test_keys_are_uuids_as_the_description_asks():
    assert uuid.UUID(idempotency_key("GW1234", "order")).version == 5
