"""Each method's success and failure paths in a real browser against the live server, and the
signed return to the merchant checked by an independent implementation of the signature."""
from __future__ import annotations

import subprocess
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.models import Payment
from tests.payments.hosted.conftest import independent_return_signature, submit, wait_for_return

pytestmark = pytest.mark.browser


def payment_of(session) -> Payment:
    return Payment.objects.select_related("merchant").get(payment_id=session["paymentId"])


def assert_signed_return(page, site, session, shop, *, status, mode, paid):
    params = wait_for_return(page, site)
    payment = payment_of(session)
    assert payment.status == status
    assert params == {
        "transaction_id": payment.sabpaisa_txn_id,
        "merchant_txn_id": payment.merchant_txn_id,
        "status": status,
        "amount": str(payment.amount),
        "paid_amount": str(paid),
        "payment_mode": mode,
        "timestamp": params["timestamp"],
        "signature": independent_return_signature(shop.secret_key, page.url.split("?", 1)[1]),
    }
    assert int(params["timestamp"]) >= int(payment.completed_at.timestamp())
    assert payment.events.filter(kind="redirect").exists()
    # The merchant's server really received the GET.
    assert any(r.path == page.url.split(site.url(""), 1)[1] for r in site.wait_for(1))
    if status == "SUCCESS":
        assert payment.bank_rrn and payment.paid_amount == payment.amount
    return payment


# --- UPI ------------------------------------------------------------------------------------

def test_upi_collect_declined_returns_failed(checkout, start, merchant_site, shop):
    session = start()
    checkout.click("[data-method=UPI]")
    checkout.fill("input[name=vpa]", "failure@sandbox")
    submit(checkout, "UPI")
    assert_signed_return(checkout, merchant_site, session, shop, status="FAILED", mode="UPI", paid=0)


def test_upi_unknown_vpa_is_refused_on_the_page_and_the_session_stays_open(checkout, start):
    session = start()
    checkout.click("[data-method=UPI]")
    checkout.fill("input[name=vpa]", "someone@okbank")
    submit(checkout, "UPI")
    assert "not a sandbox test VPA" in checkout.locator("#vpa-error").inner_text()
    assert payment_of(session).status == "PENDING"


def test_upi_qr_code_is_the_payments_upi_link_and_paying_it_finishes_the_checkout(
        checkout, start, merchant_site, shop, tmp_path):
    from payments.services.upi import upi_link, upi_pay_link

    session = start()
    checkout.click("[data-method=UPI]")
    qr = checkout.locator("details:has([data-method=UPI]) img[data-upi-qr]")
    image = tmp_path / "qr.png"
    qr.screenshot(path=str(image))
    decoded = subprocess.run(["zbarimg", "--quiet", "--raw", str(image)], capture_output=True, text=True,
                             check=True).stdout.strip()
    assert decoded == upi_link(payment_of(session))

    checkout.click("text=I have scanned the code")  # the waiting page, showing the QR again
    assert checkout.locator("meta[http-equiv=refresh]").count() == 1
    upi_pay_link(upi_uri=decoded, payer_vpa="failure@sandbox")  # the customer's UPI app
    assert_signed_return(checkout, merchant_site, session, shop, status="FAILED", mode="UPI", paid=0)


# --- cards ----------------------------------------------------------------------------------

def pay_by_card(page, number, otp=None):
    page.click("[data-method=CARD]")
    page.fill("input[name=card_number]", number)
    page.fill("input[name=card_expiry]", (timezone.now() + timedelta(days=400)).strftime("%m/%y"))
    page.fill("input[name=card_cvv]", "123")
    submit(page, "CARD")
    if otp is not None:
        page.fill("input[name=otp]", otp)
        page.locator("form:has(input[name=otp]) button[type=submit]").click()


@pytest.mark.parametrize(("number", "network", "issuer"), [
    ("4111 1111 1111 1111", "VISA", "Sandbox Bank of India"),
    ("5555555555554444", "MASTERCARD", "Sandbox Co-operative Bank"),
])
def test_card_with_the_right_otp_succeeds(checkout, start, merchant_site, shop, number, network, issuer):
    session = start()
    pay_by_card(checkout, number, otp="123456")
    payment = assert_signed_return(checkout, merchant_site, session, shop, status="SUCCESS", mode="CARD",
                                   paid=session_amount(session))
    assert (payment.card_last4, payment.card_network, payment.card_issuer) == (number[-4:], network, issuer)


def session_amount(session) -> int:
    return payment_of(session).amount


def test_card_with_a_wrong_otp_fails(checkout, start, merchant_site, shop):
    session = start()
    pay_by_card(checkout, "4111111111111111", otp="654321")
    payment = assert_signed_return(checkout, merchant_site, session, shop, status="FAILED", mode="CARD", paid=0)
    assert "wrong OTP" in payment.failure_reason


def test_card_declined_by_the_issuer_fails_without_a_challenge(checkout, start, merchant_site, shop):
    session = start()
    pay_by_card(checkout, "4000 0000 0000 0002")
    payment = assert_signed_return(checkout, merchant_site, session, shop, status="FAILED", mode="CARD", paid=0)
    assert payment.card_last4 == "0002"
    assert not payment.events.filter(detail__result="3ds challenge").exists()


def test_card_expired_or_bad_cvv_is_refused_on_the_page(checkout, start):
    session = start()
    checkout.click("[data-method=CARD]")
    checkout.fill("input[name=card_number]", "4111111111111111")
    checkout.fill("input[name=card_expiry]", "01/20")
    checkout.fill("input[name=card_cvv]", "12")
    submit(checkout, "CARD")
    errors = checkout.locator(".alert").inner_text()
    assert "expired" in errors and "CVV" in errors
    assert checkout.locator("input[name=card_number]").input_value() == ""  # not shown again
    assert payment_of(session).status == "PENDING"


# --- net banking and wallets ----------------------------------------------------------------

@pytest.mark.parametrize(("method", "field", "code"), [("NB", "bank", "SBIN"), ("WALLET", "wallet", "PAYTM")])
@pytest.mark.parametrize("decision", ["approve", "decline"])
def test_bank_or_wallet_page_approves_or_declines(checkout, start, merchant_site, shop, method, field, code,
                                                  decision):
    session = start()
    checkout.click(f"[data-method={method}]")
    checkout.select_option(f"select[name={field}]", code)
    submit(checkout, method)
    checkout.click(f"[data-decision={decision}]")
    status = "SUCCESS" if decision == "approve" else "FAILED"
    paid = session_amount(session) if status == "SUCCESS" else 0
    payment = assert_signed_return(checkout, merchant_site, session, shop, status=status, mode=method, paid=paid)
    assert payment.bank_code == code


# --- NEFT, RTGS and cash challan ------------------------------------------------------------

@pytest.mark.parametrize("method", ["NEFT", "RTGS", "CHALLAN"])
def test_transfer_challan_stays_open_until_the_funds_arrive(checkout, start, merchant_site, shop, method):
    # RTGS is offered from Rs 2,00,000 (gateway.methods).
    session = start(**({"amount": 20_000_000} if method == "RTGS" else {}))
    checkout.click(f"[data-method={method}]")
    submit(checkout, method)
    reference = checkout.locator("[data-reference]").inner_text()
    assert checkout.locator("[data-ifsc]").inner_text() == "SBXG0000001"
    assert checkout.locator("[data-account]").inner_text().endswith(reference[2:])
    payment = payment_of(session)
    assert (payment.status, payment.payment_mode, payment.transfer_reference) == ("PROCESSING", method, reference)
    assert payment.expires_at - payment.updated_at >= timedelta(hours=71, minutes=59)
    checkout.reload()  # still the challan, not a redirect
    assert checkout.locator("[data-reference]").inner_text() == reference

    # The tester says the money arrived, on the sandbox page the challan links to.
    checkout.click("text=Sandbox: simulate the money arriving")
    assert checkout.locator("input[name=reference]").input_value() == reference
    checkout.locator("form:has(input[name=reference]) button[type=submit]").click()
    assert checkout.locator("[data-result-status]").inner_text() == "SUCCESS"
    # The customer comes back to the checkout and is sent on to the merchant.
    checkout.goto(session["checkoutUrl"])
    assert_signed_return(checkout, merchant_site, session, shop, status="SUCCESS", mode=method,
                         paid=session_amount(session))


def test_transfer_not_paid_in_time_expires(checkout, start, merchant_site, shop):
    from payments.services.expiry import payments_expire_due

    session = start()
    checkout.click("[data-method=CHALLAN]")
    submit(checkout, "CHALLAN")
    checkout.locator("[data-reference]").wait_for()
    assert payments_expire_due(now=timezone.now() + timedelta(hours=71)) == 0
    assert payments_expire_due(now=timezone.now() + timedelta(hours=73)) == 1
    checkout.reload()
    assert_signed_return(checkout, merchant_site, session, shop, status="EXPIRED", mode="CHALLAN", paid=0)


# --- leaving --------------------------------------------------------------------------------

def test_cancel_returns_failed_without_a_mode(checkout, start, merchant_site, shop):
    session = start()
    checkout.click("text=Cancel payment and return")
    assert_signed_return(checkout, merchant_site, session, shop, status="FAILED", mode="", paid=0)


def test_an_expired_session_sends_the_customer_back_as_expired(checkout, start, merchant_site, shop):
    session = start()
    Payment.objects.filter(payment_id=session["paymentId"]).update(expires_at=timezone.now())
    checkout.reload()
    assert_signed_return(checkout, merchant_site, session, shop, status="EXPIRED", mode="", paid=0)


def test_the_merchants_own_return_parameters_are_kept_and_signed(checkout, start, merchant_site, shop):
    session = start(returnUrl=merchant_site.url("/shop/return") + "?order=42&lang=hi&status=mine")
    checkout.click("text=Cancel payment and return")
    params = wait_for_return(checkout, merchant_site)
    assert params["order"] == "42" and params["lang"] == "hi"
    assert params["status"] == "FAILED"  # ours wins over a merchant parameter of the same name
    assert params["signature"] == independent_return_signature(shop.secret_key, checkout.url.split("?", 1)[1])
