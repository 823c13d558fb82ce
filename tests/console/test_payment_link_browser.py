"""Issue 19's done-criterion, in a real browser: a finance person makes a payment link in the
console and sends its address; the customer opens it on a phone and pays; the console shows
the link paid."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.models import PaymentLink
from tests.console.conftest import screenshot
from tests.console.test_browser import signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def test_finance_sends_a_payment_link_that_gets_paid(chromium, live_server, settings, shop):
    settings.GATEWAY_PUBLIC_URL = live_server.url
    console = signed_in(chromium, live_server, "finance")
    console.goto(f"{live_server.url}/admin/payments/paymentlink/add/")
    console.select_option("#id_merchant", label=str(shop.merchant))
    console.fill("#id_amount_rupees", "1250.00")
    console.fill("#id_description", "Alteration of two kurtas")
    console.fill("#id_customer_phone", "9876543210")
    console.fill("#id_valid_days", "3")
    console.click("input[name=_save]")
    address = console.locator("[data-link-url]").inner_text()
    assert address.startswith(f"{live_server.url}/pay/")
    assert console.locator(".field-expires .readonly").inner_text().count(":") == 1  # IST, to the minute
    screenshot(console, "payment-link-created")

    customer = chromium.new_context(viewport=PHONE)
    try:
        phone = customer.new_page()
        phone.goto(address)
        phone.locator("text=Alteration of two kurtas").wait_for()
        phone.click("[data-method=CARD]")
        phone.fill("input[name=card_number]", "5555555555554444")
        phone.fill("input[name=card_expiry]", (timezone.now() + timedelta(days=400)).strftime("%m/%y"))
        phone.fill("input[name=card_cvv]", "123")
        phone.locator("details:has([data-method=CARD]) .method-body button[type=submit]").click()
        phone.fill("input[name=otp]", "123456")
        phone.locator("form:has(input[name=otp]) button[type=submit]").click()
        phone.locator('[data-link-state="paid"]').wait_for()
    finally:
        customer.close()

    link = PaymentLink.objects.select_related("payment").get()
    assert (link.payment.status, link.payment.amount, link.state) == ("SUCCESS", 125_000, "paid")
    console.reload()
    assert console.locator(".field-state_display").inner_text().strip().endswith("paid")
    assert "Nothing to cancel" in console.content()
    console.close()
