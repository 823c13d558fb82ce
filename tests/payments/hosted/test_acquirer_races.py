"""Hosted methods racing themselves: a customer (or whoever holds the session) submitting in two
tabs, or at the wrong moment, while the acquirer is still answering. Real PostgreSQL, committed
transactions and threads for the concurrent requests; only the acquirer is a test double
(tests/payments/hosted/doubles.py), so the test decides when it answers."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from gateway.core.errors import GatewayError, ValidationError
from payments.acquirer.base import AcquirerError, AcquirerUnavailable
from payments.cards import CardInput
from payments.models import Payment, PaymentEvent
from payments.services import hosted
from payments.services.expiry import payments_expire_due
from payments.services.transitions import EXPIRY_WAITS_FOR_CALL, payment_expire
from payments.state import InvalidTransition
from tests.payments.hosted.doubles import Request, scripted_acquirer
from tests.support.factories import make_merchant
from tokens import services as token_services

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


def new_session(tm, amount: int = 50000) -> Payment:
    return hosted.hosted_payment_create(merchant=tm.merchant, merchant_txn_id=f"ORD-{Payment.objects.count() + 1}",
                                        amount=amount, currency="INR",
                                        return_url="https://shop.example.in/return").payment


def fresh(payment: Payment) -> Payment:
    """The payment as another request would load it."""
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


# --- 1. the OTP needs a challenge the acquirer issued ----------------------------------------

# A failed attempt leaves a hosted payment PENDING, the methods offered again (CONTRACT.md, issue
# 19): where these tests once saw FAILED they see PENDING, and still no SUCCESS and one call.

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
    assert paying.finish().status == S.PENDING
    payment.refresh_from_db()
    assert payment.status == S.PENDING and not payment.bank_rrn
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

    monkeypatch.setattr(token_services, "card_consent_record", broken)
    payment = new_session(shop)
    with pytest.raises(RuntimeError):
        hosted.hosted_card_pay(payment=fresh(payment), card=VISA, save_card=True)
    with pytest.raises(ValidationError):
        hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456")
    payment.refresh_from_db()
    assert payment.status == S.PENDING and not payment.bank_rrn
    assert not acquirer.called("card_verify_otp")


# --- 2. one call to the acquirer per step, claimed in the database ----------------------------

def test_a_second_otp_from_a_stale_page_never_reaches_the_acquirer(shop, acquirer):
    payment = hosted.hosted_card_pay(payment=new_session(shop), card=VISA)
    tab1, tab2 = fresh(payment), fresh(payment)  # both loaded while PROCESSING
    assert hosted.hosted_card_verify_otp(payment=tab1, otp="000000").status == S.PENDING
    with pytest.raises(InvalidTransition):
        hosted.hosted_card_verify_otp(payment=tab2, otp="123456")
    assert [outcome for _, outcome, _ in acquirer.called("card_verify_otp")] == ["declined"]
    assert fresh(payment).status == S.PENDING


def test_an_otp_being_checked_keeps_its_claim_however_long_the_acquirer_takes(shop, acquirer):
    payment = hosted.hosted_card_pay(payment=new_session(shop), card=VISA)
    gate = acquirer.gate("card_verify_otp")
    first = Request(lambda: hosted.hosted_card_verify_otp(payment=fresh(payment), otp="000000"))
    gate.wait_entered()
    cache.clear()  # what a cache lock's expiry does to a claim during a long acquirer call
    with pytest.raises(ValidationError):
        hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456")
    gate.open()
    assert first.finish().status == S.PENDING
    assert [outcome for _, outcome, _ in acquirer.called("card_verify_otp")] == ["declined"]
    assert fresh(payment).status == S.PENDING and not fresh(payment).bank_rrn


@pytest.mark.parametrize("mode", ["NB", "WALLET"])
def test_a_bank_page_answered_from_two_stale_tabs_reaches_the_acquirer_once(shop, acquirer, mode):
    payment = hosted.hosted_bank_start(payment=new_session(shop), mode=mode, bank_code="HDFC")
    tab1, tab2 = fresh(payment), fresh(payment)
    assert hosted.hosted_bank_complete(payment=tab1, approved=False).status == S.PENDING
    with pytest.raises(InvalidTransition):
        hosted.hosted_bank_complete(payment=tab2, approved=True)
    assert [outcome for _, outcome, _ in acquirer.called("bank_authorize")] == ["declined"]


def test_a_bank_page_answered_twice_at_once_reaches_the_acquirer_once(shop, acquirer):
    payment = hosted.hosted_bank_start(payment=new_session(shop), mode="NB", bank_code="HDFC")
    gate = acquirer.gate("bank_authorize")
    first = Request(lambda: hosted.hosted_bank_complete(payment=fresh(payment), approved=True))
    gate.wait_entered()
    with pytest.raises(ValidationError):
        hosted.hosted_bank_complete(payment=fresh(payment), approved=True)
    gate.open()
    paid = first.finish()
    assert paid.status == S.SUCCESS
    [(_, outcome, rrn)] = acquirer.called("bank_authorize")
    assert outcome == "approved" and paid.bank_rrn == rrn


def test_funds_reported_twice_at_once_are_confirmed_with_the_bank_once(shop, acquirer):
    payment = hosted.hosted_transfer_start(payment=new_session(shop), mode="NEFT")
    gate = acquirer.gate("transfer_received")
    first = Request(lambda: hosted.hosted_transfer_received(reference=payment.transfer_reference))
    gate.wait_entered()
    with pytest.raises(ValidationError):
        hosted.hosted_transfer_received(reference=payment.transfer_reference)
    gate.open()
    assert first.finish().status == S.SUCCESS
    assert len(acquirer.called("transfer_received")) == 1


def test_an_approval_that_finds_the_payment_expired_is_kept_with_its_rrn_for_reversal(shop, acquirer, caplog):
    payment = hosted.hosted_card_pay(payment=new_session(shop), card=VISA)
    gate = acquirer.gate("card_verify_otp")
    paying = Request(lambda: hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456"))
    gate.wait_entered()
    # The session's deadline passes while the issuer is verifying the OTP, and the expiry has
    # waited for the call as long as any acquirer call may take: it goes ahead.
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now())
    assert payment_expire(payment_id=payment.pk, now=timezone.now() + EXPIRY_WAITS_FOR_CALL + timedelta(seconds=1))
    gate.open()
    with pytest.raises(InvalidTransition):
        paying.finish()
    [(_, outcome, rrn)] = acquirer.called("card_verify_otp")
    assert outcome == "approved" and rrn
    payment.refresh_from_db()
    assert payment.status == S.EXPIRED and not payment.bank_rrn
    assert payment.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__outcome="approved",
                                 detail__reference=rrn).exists()
    assert any(record.levelname == "ERROR" and "needs reversal" in record.getMessage() and rrn in record.getMessage()
               for record in caplog.records)


def test_every_acquirer_answer_is_kept_with_its_reference(shop, acquirer):
    card = hosted.hosted_card_pay(payment=new_session(shop), card=VISA)
    card = hosted.hosted_card_verify_otp(payment=card, otp="123456")
    bank = hosted.hosted_bank_start(payment=new_session(shop), mode="NB", bank_code="SBIN")
    bank = hosted.hosted_bank_complete(payment=bank, approved=True)
    transfer = hosted.hosted_transfer_start(payment=new_session(shop, amount=20_000_000), mode="RTGS")
    transfer = hosted.hosted_transfer_received(reference=transfer.transfer_reference)
    for payment in (card, bank, transfer):
        answers = payment.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__outcome="approved")
        assert [event.detail["reference"] for event in answers] == [payment.bank_rrn]
    challenge = card.events.get(kind=PaymentEvent.Kind.ACQUIRER, detail__outcome="challenge")
    assert challenge.detail["reference"] == card.card_challenge_ref


# --- 4. no answer from the acquirer is not a decline ----------------------------------------

@pytest.mark.parametrize("error", [AcquirerUnavailable("timed out"), AcquirerError("bad gateway")],
                         ids=["timeout", "error"])
def test_an_otp_the_acquirer_did_not_answer_leaves_the_payment_waiting(shop, acquirer, error):
    payment = hosted.hosted_card_pay(payment=new_session(shop), card=VISA)
    acquirer.fail("card_verify_otp", error)
    with pytest.raises(GatewayError) as caught:
        hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456")
    assert caught.value.code == "SERVICE_UNAVAILABLE" and "try again" in caught.value.message
    waiting = fresh(payment)
    assert (waiting.status, waiting.failure_reason, waiting.acquirer_call_started_at) == (S.PROCESSING, "", None)
    assert waiting.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__outcome="no answer").exists()
    acquirer.fail("card_verify_otp", None)  # the acquirer is back: the customer tries again
    assert hosted.hosted_card_verify_otp(payment=fresh(payment), otp="123456").status == S.SUCCESS


def test_a_bank_page_the_acquirer_did_not_answer_leaves_the_payment_waiting_until_it_expires(shop, acquirer):
    payment = hosted.hosted_bank_start(payment=new_session(shop), mode="WALLET", bank_code="PAYTM")
    acquirer.fail("bank_authorize", AcquirerUnavailable("timed out"))
    with pytest.raises(GatewayError) as caught:
        hosted.hosted_bank_complete(payment=fresh(payment), approved=True)
    assert caught.value.code == "SERVICE_UNAVAILABLE"
    assert fresh(payment).status == S.PROCESSING
    # Nobody comes back (and nothing reconciles it): the payment ends by its expiry, not FAILED.
    assert payments_expire_due(now=fresh(payment).expires_at) == 1
    assert fresh(payment).status == S.EXPIRED


def test_the_challenge_page_asks_the_customer_to_wait_when_the_acquirer_did_not_answer(shop, acquirer):
    from django.test import Client

    session = hosted.hosted_payment_create(merchant=shop.merchant, merchant_txn_id="ORD-PAGE", amount=50000,
                                           currency="INR", return_url="https://shop.example.in/return")
    browser = Client()
    pid = session.payment.payment_id
    browser.get(f"/checkout/{pid}?clientSecret={session.client_secret}")
    browser.post(f"/checkout/{pid}/card", {"card_number": "4111 1111 1111 1111", "card_expiry": "12/39",
                                           "card_cvv": "123"})
    acquirer.fail("card_verify_otp", AcquirerUnavailable("timed out"))
    response = browser.post(f"/checkout/{pid}/card/challenge", {"otp": "123456"})
    assert response.status_code == 200 and "try again" in response.content.decode()
    assert fresh(session.payment).status == S.PROCESSING
