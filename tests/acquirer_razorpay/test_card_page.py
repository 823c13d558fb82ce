"""Issue 33, cards through Razorpay's own page (Standard Checkout): what the checkout opens the
frame with, and the return that brings back Razorpay's signed answer, which is checked (HMAC-
SHA256 of "order_id|payment_id" under the key secret, constant time) before the status query
decides; a forged one is not acted on. Against the stateful double over loopback HTTP."""
from __future__ import annotations

import hashlib
import hmac
from types import SimpleNamespace

import pytest

from payments.acquirer.base import NoticeMalformed, NoticeRejected
from payments.acquirer.razorpay.acquirer import RazorpayAcquirer
from payments.acquirer.razorpay.checks import CHECKOUT_JS, problems
from payments.models import Payment, PaymentEvent
from payments.services import hosted
from tests.acquirer_razorpay.double import KEY_SECRET
from tests.acquirer_razorpay.test_settings import COMPLETE
from tests.support.factories import make_merchant, make_payment

S = Payment.Status


def signed(order_id: str, payment_id: str, secret: str = KEY_SECRET) -> dict:
    signature = hmac.new(secret.encode(), f"{order_id}|{payment_id}".encode(), hashlib.sha256).hexdigest()
    return {"razorpay_payment_id": payment_id, "razorpay_order_id": order_id, "razorpay_signature": signature}


@pytest.fixture
def card_page(settings, razorpay_double):
    settings.CARD_FORM_MODE = "processor"
    settings.RAZORPAY_CHECKOUT_JS_URL = razorpay_double.checkout_js_url
    return razorpay_double


@pytest.fixture
def payment(db) -> Payment:
    payment = make_payment(make_merchant(), amount=25000, status=S.PENDING)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="+91 98765 43210", customer_email="asha@example.in")
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


def test_the_card_page_is_razorpays_checkout_opened_with_the_public_key_only(card_page):
    fields = RazorpayAcquirer().card_fields()
    assert fields.script == card_page.checkout_js_url and fields.origins == (card_page.origin,)
    assert (fields.api, fields.inline) == ("razorpay-checkout-v1", False)
    assert fields.options == {"key": card_page.key_id}  # the key id, which Razorpay publishes; never the secret


@pytest.mark.django_db
def test_the_signed_answer_names_its_payment_and_anything_else_is_refused(card_page, payment):
    acquirer = RazorpayAcquirer()
    order_id = acquirer.card_fields_open(payment=payment, return_url="https://pay.example.com/back").reference
    assert order_id.startswith("order_")
    status, answer = card_page.pay_in_checkout(order_id)
    assert status == 200 and answer == signed(order_id, answer["razorpay_payment_id"])
    assert acquirer.card_fields_said(payment=payment, said=answer) == answer["razorpay_payment_id"]
    assert acquirer.card_fields_said(payment=payment, said={}) == ""  # closed, or failed: nothing signed
    with pytest.raises(NoticeMalformed):
        acquirer.card_fields_said(payment=payment, said={"razorpay_payment_id": answer["razorpay_payment_id"]})
    with pytest.raises(NoticeRejected):  # another payment id under the same signature
        acquirer.card_fields_said(payment=payment, said={**answer, "razorpay_payment_id": "pay_Forged00000001"})
    with pytest.raises(NoticeRejected):  # signed with something other than our key secret
        acquirer.card_fields_said(payment=payment, said=signed(order_id, answer["razorpay_payment_id"], "guess"))
    with pytest.raises(NoticeRejected):  # genuinely signed, but for another order
        acquirer.card_fields_said(payment=payment, said=signed("order_Another000001", answer["razorpay_payment_id"]))


@pytest.mark.django_db(transaction=True)
def test_a_forged_return_is_not_acted_on_and_a_genuine_one_is_confirmed_by_the_status_query(card_page, payment):
    order_id = hosted.hosted_card_fields_open(payment=payment)
    status, answer = card_page.pay_in_checkout(order_id)
    assert status == 200
    forged = {**answer, "razorpay_signature": "0" * 64}
    back = hosted.hosted_acquirer_return(payment=payment, said=forged)
    assert back.status == S.PROCESSING  # nothing asked, nothing applied
    assert not any(call.path.endswith("/capture") for call in card_page.calls)
    assert PaymentEvent.objects.filter(payment=payment, detail__outcome="not the processor's word").count() == 1
    back = hosted.hosted_acquirer_return(payment=payment, said=answer)
    assert (back.status, back.payment_mode) == (S.SUCCESS, "CARD") and back.bank_rrn
    (paid,) = card_page.payments_of(payment.sabpaisa_txn_id)
    assert paid["status"] == "captured"


@pytest.mark.django_db(transaction=True)
def test_a_card_the_issuer_declined_in_the_frame_is_a_failed_attempt(card_page, payment):
    order_id = hosted.hosted_card_fields_open(payment=payment)
    status, error = card_page.pay_in_checkout(order_id, otp="000000")
    assert status == 400 and error["error"]["metadata"]["order_id"] == order_id
    back = hosted.hosted_acquirer_return(payment=payment, said={})
    assert (back.status, back.failed_attempts) == (S.PENDING, 1)


def test_production_refuses_a_checkout_js_other_than_razorpays_own():
    assert problems(SimpleNamespace(**COMPLETE, RAZORPAY_CHECKOUT_JS_URL=CHECKOUT_JS)) == []
    found = problems(SimpleNamespace(**COMPLETE, RAZORPAY_CHECKOUT_JS_URL="https://cdn.example.com/checkout.js"))
    assert found == [f"RAZORPAY_CHECKOUT_JS_URL must be Razorpay's own {CHECKOUT_JS} in production"]
