"""The official SDK sabpaisa-python 1.0.1 (its own environment, .venv-sdk101; see
tests/support/sdk101.py) against the live server, with only base_url changed, every call of
the payments half as a merchant makes it: payments.create (with the order fields, udf and an
idempotency key), payments.status (by merchantTxnId, with spTxnId, the merchant only in
X-Merchant-Id), create_upi_s2s with webhook_url, and the typed errors it raises."""
from __future__ import annotations

import json
import urllib.request

import pytest

from payments.models import Payment
from tests.support.factories import make_merchant
from tests.support.receiver import Receiver
from tests.support.sdk101 import run_sdk101

ORDER = '''
billing = BillingAddress(name="Asha Rao", line1="12 MG Road", city="Bengaluru", state="Karnataka",
                         postal_code="560001", country="IN", phone="9876543210")
items = [LineItem(name="Masala chai 250 g", sku="CHAI-250", hsn_code="0902", quantity=3, unit_price=45000,
                  tax_percent=5, tax=6750),
         {"name": "Kettle", "quantity": 1, "unitPrice": 8150}]
summary = OrderSummary(subtotal=143150, tax_amount=6750, total_amount=149900, discount_code="DIWALI")
'''


@pytest.fixture
def shop(transactional_db, live_server, settings):
    settings.GATEWAY_PUBLIC_URL = live_server.url
    return make_merchant(name="Chai Point Stores")


def test_payments_create_answers_what_the_sdk_requires_and_keeps_the_order(live_server, shop):
    answer = run_sdk101(ORDER + '''
session = client.payments.create(
    merchant_txn_id=txn, amount=149900, customer_name="Asha Rao", customer_email="asha@example.com",
    customer_phone="9876543210", return_url="https://shop.example/return?cart=77", description="Chai",
    metadata={"orderRef": "A1"}, customer_id="CUST-42", billing_address=billing, shipping_same_as_billing=True,
    line_items=items, order_summary=summary, udf={"udf1": "loyalty-9"}, idempotency_key="order-1")
again = client.payments.create(
    merchant_txn_id=txn, amount=149900, customer_name="Asha Rao", customer_email="asha@example.com",
    customer_phone="9876543210", return_url="https://shop.example/return?cart=77", description="Chai",
    metadata={"orderRef": "A1"}, customer_id="CUST-42", billing_address=billing, shipping_same_as_billing=True,
    line_items=items, order_summary=summary, udf={"udf1": "loyalty-9"}, idempotency_key="order-1")
result = {"session": session, "again": again, "redirect": session.redirect_url}
''', server=live_server, merchant=shop, txn="SDK101-ORD-1")

    session = answer["session"]
    assert session["success"] is True and session["status"] == "PENDING"
    assert (session["amount"], session["currency"], session["merchantTxnId"]) == (149900, "INR", "SDK101-ORD-1")
    assert answer["redirect"] == f"{session['checkoutUrl']}?clientSecret={session['clientSecret']}"
    assert answer["again"] == session  # the idempotent replay: the same session, secret and all
    payment = Payment.objects.get()
    assert payment.payment_id == session["paymentId"] and payment.udf == {"udf1": "loyalty-9"}
    order = payment.order_details
    assert order["customerId"] == "CUST-42" and order["shippingSameAsBilling"] is True
    assert order["billingAddress"]["postalCode"] == "560001"
    assert [item["quantity"] for item in order["lineItems"]] == [3, 1]
    assert order["lineItems"][0]["hsnCode"] == "0902" and order["lineItems"][0]["taxPercent"] == 5
    assert order["orderSummary"] == {"subtotal": 143150, "taxAmount": 6750, "totalAmount": 149900,
                                     "discountCode": "DIWALI"}


def test_payments_status_reads_the_enquiry_with_and_without_sp_txn_id(live_server, shop):
    answer = run_sdk101('''
session = client.payments.create(merchant_txn_id="SDK101-ST-1", amount=50000, customer_name="Asha Rao",
                                 customer_email="asha@example.com", customer_phone="9876543210",
                                 return_url="https://shop.example/return")
plain = client.payments.status("SDK101-ST-1")
named = client.payments.enquire("SDK101-ST-1", sp_txn_id=session.model_extra["sabpaisaTxnId"])
result = {"session": session, "plain": plain, "named": named, "is_success": plain.is_success}
''', server=live_server, merchant=shop)

    payment = Payment.objects.get()
    for status in (answer["plain"], answer["named"]):
        assert status["success"] is True and status["status"] == "PENDING"
        assert (status["txnId"], status["merchantId"], status["merchantTxnId"]) == (
            payment.sabpaisa_txn_id, shop.code, "SDK101-ST-1")
        assert (status["amountPaise"], status["currency"], status["customerMobile"]) == (50000, "INR", "9876543210")
        assert status["initiatedAt"] and status["completedAt"] is None and status["traceId"]
    assert answer["is_success"] is False


def test_payments_status_raises_not_found_for_an_unknown_or_mismatched_payment(live_server, shop):
    other = make_merchant()
    run_sdk101('''
client.payments.create(merchant_txn_id="SDK101-NF-1", amount=50000, customer_name="Asha Rao",
                       customer_email="asha@example.com", customer_phone="9876543210",
                       return_url="https://shop.example/return")
''', server=live_server, merchant=other)
    for snippet in ('result = client.payments.status("SDK101-NOPE")',
                    'result = client.payments.status("SDK101-NF-1")',  # another merchant's
                    'result = client.payments.status("SDK101-NF-1", sp_txn_id="SPNOTTHISONE")'):
        raised = run_sdk101(snippet, server=live_server, merchant=shop)
        assert (raised["raised"], raised["code"], raised["http_status"]) == ("NotFoundError", "NOT_FOUND", 404)


def test_create_upi_s2s_with_its_own_webhook_url_and_a_live_staging_vpa(live_server, shop, settings):
    # The receiver listens on loopback: the tests-only setting lets a request's webhookUrl reach it.
    settings.WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE = True
    from webhooks.models import WebhookDelivery
    from webhooks.services import delivery_attempt_run

    with Receiver() as site:
        answer = run_sdk101(ORDER + '''
created = client.payments.create_upi_s2s(
    merchant_txn_id="SDK101-UPI-1", amount=25000, customer_name="Asha Rao", customer_email="asha@example.com",
    customer_phone="9876543210", mode=UpiPaymentMode.INTENT, webhook_url=hook, customer_id="CUST-42",
    line_items=items, order_summary=summary, idempotency_key="upi-1")
result = created
''', server=live_server, merchant=shop, hook=site.url("/orders/upi-1"))
        assert answer["status"] == "PROCESSING" and answer["intentUrl"].startswith("upi://pay?")
        payment = Payment.objects.get()
        assert payment.webhook_url == site.url("/orders/upi-1") and payment.order_details["customerId"] == "CUST-42"

        # The customer's UPI app declines (the live staging's failure@upi), and the merchant asks.
        paid = urllib.request.urlopen(urllib.request.Request(
            f"{live_server.url}/sandbox/upi/pay", method="POST", headers={"Content-Type": "application/json"},
            data=json.dumps({"upiUri": answer["intentUrl"], "payerVpa": "failure@upi"}).encode()))
        assert paid.status == 202
        status = run_sdk101('result = client.payments.status("SDK101-UPI-1")', server=live_server, merchant=shop)
        assert status["status"] == "FAILED" and status["completedAt"] and status["paymentMode"] == "UPI"

        for delivery in WebhookDelivery.objects.all():
            delivery_attempt_run(delivery.pk)
        (request,) = site.wait_for(1)
        assert request.path == "/orders/upi-1" and request.json()["status"] == "FAILED"


@pytest.mark.parametrize("change, raised, code, status", [
    ("secret_key='gws_not_the_secret'", "InvalidSignatureError", "INVALID_SIGNATURE", 400),
    ("api_key='gwk_not_a_key_not_a_key_not_a_key'", "AuthenticationError", "UNAUTHORIZED", 401),
])
def test_the_sdk_raises_its_typed_error_for_our_codes(live_server, shop, change, raised, code, status):
    answer = run_sdk101(f'''
bad = SabPaisaClient(**{{"api_key": client.config.api_key, "secret_key": client.config.secret_key.get_secret_value(),
                         "merchant_id": client.config.merchant_id, "base_url": client.config.base_url,
                         "max_retries": 0, {change.split("=")[0]!r}: {change.split("=", 1)[1]}}})
result = bad.payments.create(merchant_txn_id="SDK101-ERR-1", amount=50000, customer_name="Asha Rao",
                             customer_email="asha@example.com", customer_phone="9876543210",
                             return_url="https://shop.example/return")
''', server=live_server, merchant=shop)
    assert (answer["raised"], answer["code"], answer["http_status"]) == (raised, code, status)
    assert answer["message"] and answer["trace_id"]
    assert Payment.objects.count() == 0


def test_duplicates_and_validation_errors_reach_the_merchant_with_our_message(live_server, shop):
    create = ('def create(txn, phone="9876543210", items=None):\n'
              '    return client.payments.create(merchant_txn_id=txn, amount=50000, customer_name="Asha Rao",\n'
              '        customer_email="asha@example.com", customer_phone=phone,\n'
              '        return_url="https://shop.example/return", line_items=items)\n')
    assert run_sdk101(create + 'result = create("SDK101-DUP-1")', server=live_server, merchant=shop)["success"]
    duplicate = run_sdk101(create + 'result = create("SDK101-DUP-1")', server=live_server, merchant=shop)
    assert (duplicate["raised"], duplicate["code"]) == ("DuplicateTransactionError", "DUPLICATE_TRANSACTION")
    assert "SDK101-DUP-1" in duplicate["message"]

    phone = run_sdk101(create + 'result = create("SDK101-PH-1", phone="12345")', server=live_server, merchant=shop)
    assert (phone["raised"], phone["code"], phone["http_status"]) == ("APIError", "VALIDATION_ERROR", 400)
    assert phone["message"].startswith("customerPhone")
    assert phone["response_body"]["error"] == {"code": "VALIDATION_ERROR", "message": phone["message"]}


@pytest.mark.browser
def test_a_session_made_by_the_sdk_paid_in_the_browser_reads_success(live_server, shop, checkout, merchant_site):
    from tests.payments.hosted.conftest import submit, wait_for_return

    session = run_sdk101('''
result = client.payments.create(merchant_txn_id="SDK101-PAY-1", amount=19900, customer_name="Asha Rao",
                                customer_email="asha@example.com", customer_phone="9876543210",
                                return_url=back)
''', server=live_server, merchant=shop, back=merchant_site.url("/shop/return"))
    checkout.goto(f"{session['checkoutUrl']}?clientSecret={session['clientSecret']}")  # its redirect_url
    checkout.click("[data-method=CARD]")
    checkout.fill("input[name=card_number]", "4111 1111 1111 1111")
    checkout.fill("input[name=card_expiry]", "12/39")
    checkout.fill("input[name=card_cvv]", "123")  # the live staging's test CVV
    submit(checkout, "CARD")
    checkout.fill("input[name=otp]", "123456")
    checkout.locator("form:has(input[name=otp]) button[type=submit]").click()
    assert wait_for_return(checkout, merchant_site)["status"] == "SUCCESS"

    status = run_sdk101('''
answer = client.payments.status("SDK101-PAY-1")
result = {"answer": answer, "is_success": answer.is_success}
''', server=live_server, merchant=shop)
    payment = Payment.objects.get()
    answer = status["answer"]
    assert status["is_success"] is True and answer["paymentMode"] == "CARD"
    assert answer["bankTxnId"] == answer["bankRrn"] == payment.bank_rrn
    assert answer["completedAt"] and answer["paidAmount"] == "199.0"  # rupees, as a Decimal
