"""The official SDK (sabpaisa-python 3.0.0) against the live server, changing only its
base_url: create_payment, get_checkout_url, verify_callback on the real return redirect, and
enquiry."""
from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from sabpaisa_python import SabPaisa

from payments.models import Payment
from tests.payments.hosted.conftest import submit, wait_for_return

pytestmark = pytest.mark.browser


@pytest.fixture
def sdk(shop, live_server, settings):
    settings.GATEWAY_PUBLIC_URL = live_server.url
    client = SabPaisa(shop.code, shop.api_key, shop.secret_key)
    client.base_url = live_server.url
    return client


def test_sdk_create_pay_verify_and_enquire(sdk, checkout, merchant_site):
    return_url = merchant_site.url("/shop/return") + "?cart=77"
    created = sdk.create_payment("ORD1", 19.99, "Asha Rao", "asha@example.com", "+91 98765 43210", return_url,
                                 udf1="loyalty-9", udf5="x")
    assert created["success"] is True, created
    assert created["status"] == "PENDING"
    payment = Payment.objects.get(payment_id=created["paymentId"])
    assert payment.amount == 1998  # the SDK's float truncation, accepted as sent
    assert payment.merchant_txn_id == created["merchant_txn_id"]
    assert payment.customer_phone == "9876543210"
    assert payment.udf == {"udf1": "loyalty-9", "udf5": "x"}

    url = sdk.get_checkout_url(created)
    assert url == f"{created['checkoutUrl']}?clientSecret={created['clientSecret']}"
    checkout.goto(url)
    checkout.click("[data-method=CARD]")
    checkout.fill("input[name=card_number]", "5555 5555 5555 4444")
    checkout.fill("input[name=card_expiry]", "12/39")
    checkout.fill("input[name=card_cvv]", "321")
    submit(checkout, "CARD")
    checkout.fill("input[name=otp]", "123456")
    checkout.locator("form:has(input[name=otp]) button[type=submit]").click()

    params = wait_for_return(checkout, merchant_site)
    verified = sdk.verify_callback(params)
    assert verified["signature_valid"] is True and verified["success"] is True
    assert (verified["status"], verified["amount"], verified["paid_amount"]) == ("SUCCESS", 1998, 1998)
    assert verified["payment_mode"] == "CARD" and params["cart"] == "77"
    assert sdk.verify_callback(dict(params, amount="199800"))["signature_valid"] is False
    assert sdk.verify_callback(dict(params, cart="78"))["signature_valid"] is False

    answer = sdk.enquiry(created["merchant_txn_id"])
    payment.refresh_from_db()
    assert answer["success"] is True
    assert answer["status"] == "SUCCESS" and answer["amount"] == 1998 and answer["amountPaise"] == 1998
    assert answer["paymentMode"] == "CARD" and answer["bankRrn"] == payment.bank_rrn
    assert answer["paidAmount"] == 19.98


def test_sdk_sees_failures_as_failures(sdk, merchant_site, monkeypatch):
    import sabpaisa_python

    # The SDK's clock stands still (its module only), so one order gives one merchantTxnId twice.
    frozen = int(time.time())
    monkeypatch.setattr(sabpaisa_python, "time", SimpleNamespace(time=lambda: frozen))
    created = sdk.create_payment("ORD2", 10, "Asha", "asha@example.com", "9876543210", merchant_site.url("/r"))
    assert created["success"] is True
    again = sdk.create_payment("ORD2", 10, "Asha", "asha@example.com", "9876543210", merchant_site.url("/r"))
    assert again["success"] is False and again["http_code"] == 400  # DUPLICATE_TRANSACTION
    # The SDK shows a merchant only the envelope's error.message (issue 17), not "HTTP Error 400".
    assert again["error"] == f"merchantTxnId {created['merchant_txn_id']!r} has already been used"
    assert sdk.enquiry("TXNnopeT1")["http_code"] == 404
    sdk.secret_key = "gws_wrong"
    rejected = sdk.create_payment("ORD3", 10, "Asha", "asha@example.com", "9876543210", merchant_site.url("/r"))
    assert rejected["success"] is False and rejected["http_code"] == 400
    sdk.api_key = "gwk_wrong_wrong_wrong_wrong"
    assert sdk.enquiry(created["merchant_txn_id"])["http_code"] == 401
