"""Hosted methods racing themselves: a customer (or whoever holds the session) submitting in two
tabs, or at the wrong moment, while the acquirer is still answering. Real PostgreSQL, committed
transactions and threads for the concurrent requests; only the acquirer is a test double
(tests/payments/hosted/doubles.py), so the test decides when it answers."""
from __future__ import annotations

import pytest

from gateway.errors import ValidationError
from payments.cards import CardInput
from payments.models import Payment
from payments.services import hosted
from tests.payments.hosted.doubles import Request, scripted_acquirer
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db(transaction=True)

S = Payment.Status
VISA = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2039, cvv="123")
DECLINED = CardInput(number="4000000000000002", expiry_month=12, expiry_year=2039, cvv="123")


@pytest.fixture
def shop():
    return make_merchant(code="RACES")


@pytest.fixture
def acquirer(monkeypatch):
    yield from scripted_acquirer(monkeypatch)


def new_session(tm) -> Payment:
    return hosted.hosted_payment_create(merchant=tm.merchant, merchant_txn_id=f"ORD-{Payment.objects.count() + 1}",
                                        amount=50000, currency="INR",
                                        return_url="https://shop.example.in/return").payment


def fresh(payment: Payment) -> Payment:
    """The payment as another request would load it."""
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


# --- 1. the OTP needs a challenge the acquirer issued ----------------------------------------

def test_an_otp_sent_while_a_declined_card_is_being_authorised_is_refused(shop, acquirer):
    # Tab 1 submits a card the issuer will decline; while the acquirer is deciding (the payment
    # is already PROCESSING/CARD), tab 2 posts the public sandbox OTP.
    gate = acquirer.gate("card_authorize")
    payment = new_session(shop)
    paying = Request(lambda: hosted.hosted_card_pay(payment=fresh(payment), card=DECLINED))
    gate.wait_entered()
    with pytest.raises(ValidationError):
        hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456")
    gate.open()
    assert paying.finish().status == S.FAILED
    payment.refresh_from_db()
    assert payment.status == S.FAILED and not payment.bank_rrn
    assert not acquirer.called("card_verify_otp")


def test_the_otp_is_checked_against_the_challenge_the_acquirer_issued(shop, acquirer):
    payment = hosted.hosted_card_pay(payment=new_session(shop), card=VISA)
    challenge = acquirer.called("card_authorize")[0][2]
    assert challenge and fresh(payment).card_challenge_ref == challenge
    hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456")
    assert acquirer.kwargs[-1] == ("card_verify_otp", {"otp": "123456", "challenge_ref": challenge})
    assert fresh(payment).status == S.SUCCESS


def test_a_card_payment_that_broke_before_its_challenge_cannot_take_an_otp(shop, acquirer, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("consent store down")

    monkeypatch.setattr(hosted.token_services, "card_consent_record", broken)
    payment = new_session(shop)
    with pytest.raises(RuntimeError):
        hosted.hosted_card_pay(payment=fresh(payment), card=VISA, save_card=True)
    with pytest.raises(ValidationError):
        hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456")
    payment.refresh_from_db()
    assert payment.status == S.FAILED and not payment.bank_rrn
    assert not acquirer.called("card_verify_otp")
