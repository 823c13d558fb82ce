"""payments.services.hosted without a browser: what each method's service guarantees and
refuses, the return redirect's parameters, bank references and expiry."""
from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from sabpaisa_python import SabPaisa

from gateway.core.errors import NotFound, ValidationError
from payments.cards import CardInput
from payments.models import Payment
from payments.services import hosted
from payments.services.expiry import payments_expire_due
from payments.state import InvalidTransition
from tests.payments.hosted.conftest import independent_return_signature, return_query
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

S = Payment.Status
VISA = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2039, cvv="123")


def new_session(tm, **fields) -> Payment:
    defaults = dict(merchant_txn_id=f"ORD-{Payment.objects.count() + 1}", amount=50000, currency="INR",
                    return_url="https://shop.example.in/return")
    defaults.update(fields)
    return hosted.hosted_payment_create(merchant=tm.merchant, **defaults).payment


def final(tm, **fields) -> Payment:
    payment = new_session(tm, **fields)
    return hosted.hosted_cancel(payment=payment)


# --- the return redirect ----------------------------------------------------------------------

def test_return_url_carries_the_contract_parameters_signed(merchant):
    payment = final(merchant)
    url = hosted.hosted_return_url(payment, now=1_800_000_000)
    assert url.startswith("https://shop.example.in/return?")
    params = return_query(url)
    assert params == {
        "transaction_id": payment.sabpaisa_txn_id, "merchant_txn_id": payment.merchant_txn_id,
        "status": "FAILED", "amount": "50000", "paid_amount": "0", "payment_mode": "",
        "timestamp": "1800000000", "signature": params["signature"],
    }
    assert params["signature"] == independent_return_signature(merchant.secret_key, urlsplit(url).query)
    assert params["signature"] == params["signature"].lower() and len(params["signature"]) == 64


@pytest.mark.parametrize("return_url", [
    "https://shop.example.in/return?order=42&x=1",
    "https://shop.example.in/return?x=1&x=2",                 # repeated: sent once, the last value
    "https://shop.example.in/return?note=chai+%26+biscuits&empty=",
    "https://shop.example.in/return?signature=forged&status=SUCCESS",  # ours win
    "https://shop.example.in/return?lang=%E0%A4%B9%E0%A4%BF#thanks",   # unicode, and a fragment
    "http://localhost:8000",
])
def test_the_signature_covers_the_final_parameters_as_the_official_sdk_reads_them(merchant, return_url):
    payment = final(merchant, return_url=return_url)
    url = hosted.hosted_return_url(payment)
    parts = urlsplit(url)
    params = return_query(url)
    assert params["status"] == "FAILED"
    assert parts.fragment == urlsplit(return_url).fragment
    assert parts.query.count("signature=") == 1
    assert params["signature"] == independent_return_signature(merchant.secret_key, parts.query)
    sdk = SabPaisa(merchant.code, merchant.api_key, merchant.secret_key)
    assert sdk.verify_callback(params)["signature_valid"] is True
    tampered = dict(params, paid_amount="50000")
    assert sdk.verify_callback(tampered)["signature_valid"] is False


def test_only_a_final_payment_is_redirected_and_each_redirect_is_recorded(merchant):
    payment = new_session(merchant)
    with pytest.raises(InvalidTransition):
        hosted.hosted_redirect(payment)
    payment = hosted.hosted_cancel(payment=payment)
    hosted.hosted_redirect(payment)
    note = payment.events.get(kind="redirect")
    assert note.detail == {"status": "FAILED", "to": "https://shop.example.in/return"}


# --- methods ----------------------------------------------------------------------------------

def test_card_challenge_keeps_only_last4_network_and_issuer(merchant):
    payment = hosted.hosted_card_pay(payment=new_session(merchant), card=VISA)
    payment.refresh_from_db()
    assert (payment.status, payment.payment_mode) == ("PROCESSING", "CARD")
    assert (payment.card_last4, payment.card_network, payment.card_issuer) == ("1111", "VISA", "Sandbox Bank of India")
    assert "4111111111111111" not in str(list(payment.events.values("detail")))
    assert repr(VISA) == "CardInput(last4=1111, network=VISA)"


def test_card_otp_right_succeeds_with_a_bank_reference_and_wrong_fails(merchant):
    good = hosted.hosted_card_pay(payment=new_session(merchant), card=VISA)
    good = hosted.hosted_card_verify_otp(payment=good, otp="123456")
    assert good.status == S.SUCCESS and len(good.bank_rrn) == 12 and good.paid_amount == good.amount
    bad = hosted.hosted_card_pay(payment=new_session(merchant), card=VISA)
    bad = hosted.hosted_card_verify_otp(payment=bad, otp="000000")
    # A failed attempt: the methods again (CONTRACT.md), with the reason to show.
    assert bad.status == S.PENDING and not bad.bank_rrn and "wrong OTP" in bad.attempt_error
    with pytest.raises(InvalidTransition):  # one OTP per challenge: a second one finds no challenge
        hosted.hosted_card_verify_otp(payment=bad, otp="123456")


def test_an_otp_already_being_checked_is_not_checked_twice(merchant):
    payment = hosted.hosted_card_pay(payment=new_session(merchant), card=VISA)
    # Another submission's claim on the acquirer call (tests/payments/hosted/test_acquirer_races.py
    # races them for real).
    Payment.objects.filter(pk=payment.pk).update(acquirer_call_started_at=timezone.now())
    with pytest.raises(ValidationError):
        hosted.hosted_card_verify_otp(payment=payment, otp="123456")
    payment.refresh_from_db()
    assert payment.status == S.PROCESSING


def test_a_method_cannot_start_twice_or_on_a_closed_session(merchant):
    payment = hosted.hosted_card_pay(payment=new_session(merchant), card=VISA)
    with pytest.raises(InvalidTransition):
        hosted.hosted_bank_start(payment=payment, mode="NB", bank_code="HDFC")
    with pytest.raises(InvalidTransition):
        hosted.hosted_transfer_start(payment=final(merchant), mode="NEFT")
    with pytest.raises(InvalidTransition):
        hosted.hosted_cancel(payment=payment)


def test_a_session_whose_time_is_up_expires_instead_of_starting_a_method(merchant):
    payment = new_session(merchant)
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    payment.refresh_from_db()
    with pytest.raises(InvalidTransition):
        hosted.hosted_card_pay(payment=payment, card=VISA)
    payment.refresh_from_db()
    assert payment.status == S.EXPIRED and not payment.card_last4
    assert WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id).event_type == "payment.expired"


def test_cancelling_a_session_whose_time_is_up_expires_it_rather_than_failing_it(merchant):
    payment = new_session(merchant)
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    payment.refresh_from_db()
    with pytest.raises(InvalidTransition):
        hosted.hosted_cancel(payment=payment)
    payment.refresh_from_db()
    assert payment.status == Payment.Status.EXPIRED
    assert payment.events.filter(to_status=Payment.Status.FAILED).count() == 0


def test_otp_is_refused_for_a_payment_not_waiting_for_one(merchant):
    payment = hosted.hosted_bank_start(payment=new_session(merchant), mode="NB", bank_code="HDFC")
    with pytest.raises(InvalidTransition):
        hosted.hosted_card_verify_otp(payment=payment, otp="123456")
    with pytest.raises(InvalidTransition):
        hosted.hosted_bank_complete(payment=new_session(merchant), approved=True)


@pytest.mark.parametrize("mode", ["NB", "WALLET"])
def test_bank_and_wallet_answers(merchant, mode):
    ok = hosted.hosted_bank_start(payment=new_session(merchant), mode=mode, bank_code="X")
    ok = hosted.hosted_bank_complete(payment=ok, approved=True)
    assert ok.status == S.SUCCESS and ok.bank_rrn
    no = hosted.hosted_bank_start(payment=new_session(merchant), mode=mode, bank_code="X")
    assert hosted.hosted_bank_complete(payment=no, approved=False).status == S.PENDING  # a failed attempt
    with pytest.raises(ValueError):
        hosted.hosted_bank_start(payment=new_session(merchant), mode="CARD", bank_code="X")


@pytest.mark.parametrize("mode", ["NEFT", "RTGS", "CHALLAN"])
def test_transfers_stay_open_72_hours_and_succeed_when_funds_arrive(merchant, mode):
    # RTGS starts at Rs 2,00,000 (gateway.platform.methods): its session is that large.
    session = new_session(merchant, amount=20_000_000 if mode == "RTGS" else 50000)
    payment = hosted.hosted_transfer_start(payment=session, mode=mode)
    assert payment.status == S.PROCESSING and payment.transfer_reference.startswith("GW")
    assert timedelta(hours=71, minutes=59) < payment.expires_at - timezone.now() <= timedelta(hours=72)
    details = hosted.transfer_details(payment)
    assert details["account"].endswith(payment.transfer_reference[2:]) and details["ifsc"] == "SBXG0000001"
    paid = hosted.hosted_transfer_received(reference=payment.transfer_reference.lower())
    assert paid.status == S.SUCCESS and paid.bank_rrn and paid.paid_amount == paid.amount
    with pytest.raises(InvalidTransition):
        hosted.hosted_transfer_received(reference=payment.transfer_reference)
    with pytest.raises(NotFound):
        hosted.hosted_transfer_received(reference="GW000000000000")


def test_funds_for_an_expired_challan_are_refused(merchant):
    payment = hosted.hosted_transfer_start(payment=new_session(merchant), mode="CHALLAN")
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now())
    with pytest.raises(InvalidTransition):
        hosted.hosted_transfer_received(reference=payment.transfer_reference)
    payment.refresh_from_db()
    assert payment.status == S.EXPIRED


def test_every_successful_hosted_payment_keeps_its_bank_reference(merchant):
    from payments.sandbox_upi.approvals import upi_sandbox_approve
    from payments.services.upi import upi_pay

    card = hosted.hosted_card_verify_otp(payment=hosted.hosted_card_pay(payment=new_session(merchant), card=VISA),
                                         otp="123456")
    bank = hosted.hosted_bank_complete(
        payment=hosted.hosted_bank_start(payment=new_session(merchant), mode="NB", bank_code="SBIN"), approved=True)
    transfer = hosted.hosted_transfer_received(
        reference=hosted.hosted_transfer_start(payment=new_session(merchant), mode="NEFT").transfer_reference)
    upi = new_session(merchant)
    upi_pay(payment_id=upi.pk, payer_vpa="success@sandbox")
    upi = upi_sandbox_approve(payment_id=upi.pk)
    for payment in (card, bank, transfer, upi):
        payment.refresh_from_db()
        assert payment.status == S.SUCCESS and payment.bank_rrn, payment.payment_mode
    assert Payment.objects.filter(status=S.SUCCESS, bank_rrn="").count() == 0


# --- expiry -----------------------------------------------------------------------------------

def test_an_unpaid_session_expires_at_expires_at_and_not_before(merchant, settings):
    payment = new_session(merchant)
    ttl = settings.CHECKOUT_SESSION_TTL_SECONDS
    assert timedelta(seconds=ttl - 5) < payment.expires_at - timezone.now() <= timedelta(seconds=ttl)
    assert payments_expire_due(now=payment.expires_at - timedelta(seconds=1)) == 0
    assert payments_expire_due(now=payment.expires_at) == 1
    payment.refresh_from_db()
    assert payment.status == S.EXPIRED
    event = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id)
    assert event.event_type == "payment.expired"
    assert event.payload["event"] == "payment.expired" and event.payload["paid_amount"] == 0


def test_a_paid_session_does_not_expire(merchant):
    payment = hosted.hosted_card_verify_otp(payment=hosted.hosted_card_pay(payment=new_session(merchant), card=VISA),
                                            otp="123456")
    assert payments_expire_due(now=payment.expires_at + timedelta(hours=1)) == 0
    payment.refresh_from_db()
    assert payment.status == S.SUCCESS


def test_the_hosted_webhook_payload(merchant):
    payment = new_session(merchant, udf={"udf1": "cart-7"})
    payment = hosted.hosted_card_verify_otp(payment=hosted.hosted_card_pay(payment=payment, card=VISA), otp="123456")
    payload = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id).payload
    assert payload["event"] == "payment.success"
    assert (payload["txn_id"], payload["merchant_txn_id"]) == (payment.sabpaisa_txn_id, payment.merchant_txn_id)
    assert payload["paid_amount"] == 50000 and payload["amount"] == 50000
    assert payload["payment_mode"] == "CARD" and payload["bank_rrn"] == payment.bank_rrn
    assert payload["udf1"] == "cart-7" and payload["udf2"] is None
