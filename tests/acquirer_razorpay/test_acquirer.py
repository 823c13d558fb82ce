"""The Razorpay acquirer against the stateful double over real HTTP on loopback (no mocked
client): approve, decline, pending, unreachable, slow, 5xx, 429, refunds and reversals, and the
intent link of one attempt answered again."""
from __future__ import annotations

import logging
import socket

import pytest

from payments.acquirer.base import AcquirerRefused, AcquirerUnavailable, Outcome
from payments.acquirer.limits import LimitReached
from payments.acquirer.razorpay.acquirer import RazorpayAcquirer
from payments.acquirer.razorpay.client import RazorpayClient
from payments.cards import CardInput
from payments.models import Payment
from tests.acquirer_razorpay.double import KEY_ID, KEY_SECRET
from tests.support.factories import make_merchant, make_payment

pytestmark = pytest.mark.django_db
CARD = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2030, cvv="123")
S = Payment.Status


@pytest.fixture
def payment(db) -> Payment:
    payment = make_payment(make_merchant(), amount=25000, status=S.PENDING)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="+91 98765 43210", customer_email="asha@example.in")
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


@pytest.fixture
def acquirer(razorpay_double) -> RazorpayAcquirer:
    return RazorpayAcquirer(RazorpayClient(base_url=razorpay_double.base_url, key_id=KEY_ID, key_secret=KEY_SECRET,
                                           timeout=2))


def card_challenge(acquirer, payment) -> str:
    answer = acquirer.card_authorize(payment=payment, card=CARD, return_url="https://pay.example.com/back")
    assert answer.outcome == Outcome.CHALLENGE and answer.link.endswith("/authenticate")
    return answer.reference


def test_a_card_captured_at_razorpay_is_approved_with_the_banks_reference(acquirer, payment, razorpay_double):
    challenge = card_challenge(acquirer, payment)
    settled = razorpay_double.settle_payment(payment.sabpaisa_txn_id, "captured", rrn="322206890934", notify=False)
    answer = acquirer.card_verify_otp(payment=payment, otp="", challenge_ref=challenge)
    assert (answer.outcome, answer.reference) == (Outcome.APPROVED, "322206890934")
    assert settled["id"] == challenge
    # One order, named by our txn id, in paise; the card went in the one payment body.
    (order,) = razorpay_double.orders.values()
    assert (order["receipt"], order["amount"], order["notes"]["sabpaisa_txn_id"]) == (
        payment.sabpaisa_txn_id, 25000, payment.sabpaisa_txn_id)
    creates = [c for c in razorpay_double.calls if c.path == "/v1/payments/create/json"]
    assert creates[0].body["card"]["number"] == CARD.number and creates[0].body["contact"] == "9876543210"


def test_a_card_the_issuer_declines_is_declined_with_razorpays_reason(acquirer, payment, razorpay_double):
    challenge = card_challenge(acquirer, payment)
    razorpay_double.settle_payment(payment.sabpaisa_txn_id, "failed", notify=False)
    answer = acquirer.card_verify_otp(payment=payment, otp="", challenge_ref=challenge)
    assert answer.outcome == Outcome.DECLINED and answer.message == "Payment failed"


def test_an_authorized_payment_is_captured_by_the_status_query(acquirer, payment, razorpay_double):
    challenge = card_challenge(acquirer, payment)
    razorpay_double.settle_payment(payment.sabpaisa_txn_id, "authorized", rrn="111122223333", notify=False)
    answer = acquirer.card_verify_otp(payment=payment, otp="", challenge_ref=challenge)
    assert (answer.outcome, answer.reference) == (Outcome.APPROVED, "111122223333")
    assert razorpay_double.payments[challenge]["status"] == "captured"


def test_a_collect_request_is_pending_until_the_payer_approves(acquirer, payment, razorpay_double):
    assert acquirer.upi_collect(payment=payment, vpa="Asha@OkBank").outcome == Outcome.PENDING
    assert acquirer.upi_status(payment=payment, payer_vpa="asha@okbank").outcome == Outcome.PENDING
    razorpay_double.settle_payment(payment.sabpaisa_txn_id, "captured", notify=False)
    assert acquirer.upi_status(payment=payment, payer_vpa="asha@okbank").outcome == Outcome.APPROVED


def test_the_intent_of_one_attempt_answers_the_same_link_and_a_new_attempt_a_new_one(acquirer, payment,
                                                                                      razorpay_double):
    first = acquirer.upi_intent(payment=payment)
    again = acquirer.upi_intent(payment=payment)
    assert first.link.startswith("upi://pay?") and again.link == first.link
    Payment.objects.filter(pk=payment.pk).update(attempt=payment.attempt + 1)
    payment.refresh_from_db()
    assert acquirer.upi_intent(payment=payment).link != first.link
    assert len(razorpay_double.orders) == 1 and len(razorpay_double.payments) == 2


@pytest.mark.parametrize("mode, code, sent", [("NB", "PUNB", ("bank", "PUNB_R")), ("WALLET", "PHONEPE", ("wallet", "phonepe"))])
def test_net_banking_and_wallets_send_the_customer_to_the_banks_page(acquirer, payment, razorpay_double, mode, code,
                                                                      sent):
    answer = acquirer.bank_redirect(payment=payment, mode=mode, bank_code=code)
    assert answer.outcome == Outcome.PENDING and answer.link
    assert razorpay_double.calls[-1].body[sent[0]] == sent[1]
    razorpay_double.settle_payment(payment.sabpaisa_txn_id, "captured", notify=False)
    assert acquirer.bank_authorize(payment=payment, bank_code=code, approved=False).outcome == Outcome.APPROVED


def test_a_bank_razorpay_does_not_know_is_refused_before_any_call(acquirer, payment, razorpay_double):
    with pytest.raises(AcquirerRefused):
        acquirer.bank_redirect(payment=payment, mode="WALLET", bank_code="PAYTM")
    assert razorpay_double.calls == []


def test_unreachable_is_unavailable(payment):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    acquirer = RazorpayAcquirer(RazorpayClient(base_url=f"http://127.0.0.1:{port}/v1", key_id="k", key_secret="s",
                                               timeout=1))
    with pytest.raises(AcquirerUnavailable, match="did not answer"):
        acquirer.upi_register(payment=payment)


def test_calls_one_after_another_share_one_kept_alive_connection(razorpay_double):
    """The shared transport (payments.acquirer.transport): Razorpay's calls reuse the process's
    pooled connection, as Cashfree's do, instead of a new connection (and TLS handshake) a call."""
    server = razorpay_double._server
    opened = []
    accept = server.process_request
    server.process_request = lambda request, address: (opened.append(address), accept(request, address))
    client = RazorpayClient(base_url=razorpay_double.base_url, key_id=KEY_ID, key_secret=KEY_SECRET, timeout=2)
    for n in range(5):
        assert client.orders_by_receipt(f"txn_{n}") == []
    assert len(razorpay_double.calls) == 5 and len(opened) == 1


def test_a_razorpay_slower_than_the_timeout_is_unavailable(acquirer, payment, razorpay_double):
    razorpay_double.delay = 3  # the client's bound is 2 s
    with pytest.raises(AcquirerUnavailable, match="did not answer"):
        acquirer.upi_register(payment=payment)


def test_a_5xx_is_unavailable(acquirer, payment, razorpay_double):
    razorpay_double.unavailable = True
    with pytest.raises(AcquirerUnavailable, match="HTTP 500"):
        acquirer.upi_register(payment=payment)


def test_a_429_past_the_calls_time_is_limit_reached_with_the_seconds_to_wait(acquirer, payment, razorpay_double):
    razorpay_double.throttled = 5  # Retry-After beyond the client's 2 s
    with pytest.raises(LimitReached) as caught:
        acquirer.upi_register(payment=payment)
    assert caught.value.retry_after == 5
    assert len(razorpay_double.calls) == 1  # not asked again when the wait does not fit


def test_a_429_within_the_calls_time_is_asked_again_once(razorpay_double, payment):
    import threading

    razorpay_double.throttled = 0.5
    threading.Timer(0.2, lambda: setattr(razorpay_double, "throttled", None)).start()
    acquirer = RazorpayAcquirer(RazorpayClient(base_url=razorpay_double.base_url, key_id=KEY_ID,
                                               key_secret=KEY_SECRET, timeout=5))
    assert acquirer.upi_register(payment=payment).link.startswith("upi://")
    assert [c.status for c in razorpay_double.calls][:2] == [429, 200]


def test_refused_credentials_are_a_processing_error_and_the_secret_is_never_logged(razorpay_double, payment, caplog):
    from payments.acquirer.base import AcquirerError

    acquirer = RazorpayAcquirer(RazorpayClient(base_url=razorpay_double.base_url, key_id=KEY_ID,
                                               key_secret="wrong-secret-xyz", timeout=2))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(AcquirerError, match="credentials refused") as caught:
        acquirer.upi_register(payment=payment)
    assert "wrong-secret-xyz" not in caplog.text + str(caught.value) + repr(acquirer.client)


def approved(acquirer, payment, razorpay_double):
    challenge = card_challenge(acquirer, payment)
    razorpay_double.settle_payment(payment.sabpaisa_txn_id, "captured", rrn="900011112222", notify=False)
    return acquirer.card_verify_otp(payment=payment, otp="", challenge_ref=challenge)


def test_a_refund_is_pending_then_processed_with_the_arn_and_never_created_twice(acquirer, payment, razorpay_double):
    approved(acquirer, payment, razorpay_double)
    first = acquirer.refund(payment=payment, amount=10000, refund_id="rf_0001")
    assert first.outcome == Outcome.PENDING
    (refund,) = razorpay_double.refunds.values()
    assert (refund["amount"], refund["receipt"], refund["notes"]["sabpaisa_txn_id"]) == (
        10000, "rf_0001", payment.sabpaisa_txn_id)
    razorpay_double.settle_refund(refund["id"], notify=False)
    again = acquirer.refund(payment=payment, amount=10000, refund_id="rf_0001")
    assert again.outcome == Outcome.APPROVED and again.reference.startswith("ARN")
    assert len(razorpay_double.refunds) == 1


def test_a_refund_razorpay_refuses_is_declined(acquirer, payment, razorpay_double):
    approved(acquirer, payment, razorpay_double)
    answer = acquirer.refund(payment=payment, amount=30000, refund_id="rf_too_much")
    assert answer.outcome == Outcome.DECLINED and "greater than amount captured" in answer.message


def test_a_refund_id_longer_than_razorpays_receipt_is_sent_as_a_stable_derived_one(acquirer):
    long_id = "r" * 64
    assert acquirer.refund_ref(long_id) == acquirer.refund_ref(long_id) and len(acquirer.refund_ref(long_id)) <= 40


def test_a_late_approval_is_reversed_once(acquirer, payment, razorpay_double):
    approval = approved(acquirer, payment, razorpay_double)
    first = acquirer.reverse(payment=payment, bank_rrn=approval.reference, amount=payment.amount, reversal_id="rev_9")
    again = acquirer.reverse(payment=payment, bank_rrn=approval.reference, amount=payment.amount, reversal_id="rev_9")
    assert first.outcome == again.outcome == Outcome.PENDING and first.reference == again.reference
    (refund,) = razorpay_double.refunds.values()
    assert refund["amount"] == payment.amount and refund["receipt"] == "rev_9"


def test_nothing_captured_is_nothing_to_reverse(acquirer, payment, razorpay_double):
    acquirer.upi_collect(payment=payment, vpa="asha@okbank")
    answer = acquirer.reverse(payment=payment, bank_rrn="1", amount=payment.amount, reversal_id="rev_1")
    assert answer.outcome == Outcome.DECLINED and razorpay_double.refunds == {}


def test_a_status_query_of_a_payment_razorpay_never_saw_is_refused(acquirer, payment):
    with pytest.raises(AcquirerRefused):
        acquirer.call_status(payment=payment, step="bank_authorize")


def test_settlements_are_razorpays_payouts_net_of_fees_and_tax(acquirer, razorpay_double):
    from datetime import datetime, timezone

    from tests.acquirer_razorpay.shapes import fixture

    razorpay_double.settlements = fixture("settlement_collection.json")["items"]
    page = acquirer.settlements_list(start=datetime(2017, 1, 1, tzinfo=timezone.utc), end=None)
    assert [(s.settlement_id, s.utr, s.net, s.fees, s.tax, s.gross) for s in page.items][0] == (
        "setl_7IZKKI4Pnt2kEe", "RZRP173069230703", 50000, 123, 12, 50135)
    assert len(page.items) == 3 and page.cursor == ""
