"""Issue 26, in a real browser: the console's forms take amounts and phone numbers as people
write them ("1,000", "1,00,000.50", "+91 99887 76655") and refuse the rest naming the field."""
from __future__ import annotations

import pytest

from payments.models import PaymentLink
from refunds.models import Refund
from tests.console.test_browser import signed_in
from tests.support.factories import make_success_payment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_finance_refunds_1_000_rupees_typed_with_a_comma(chromium, live_server, shop):
    payment = make_success_payment(shop, amount=499_900)
    page = signed_in(chromium, live_server, "finance")
    page.goto(f"{live_server.url}/admin/refunds/refund/initiate/{payment.pk}/")
    page.fill("input[name=amount]", "1,0000")
    page.fill("input[name=reason]", "two items returned")
    page.click("input[type=submit][value=Continue]")
    error = page.locator(".errorlist").first.inner_text()
    assert "Amount (₹)" in error and "1,0000" in error and not Refund.objects.exists()

    page.fill("input[name=amount]", "1,000")
    page.click("input[type=submit][value=Continue]")
    assert "Refund ₹1,000.00 (100000 paise)" in page.inner_text("#confirm-amount")
    page.click("input[type=submit][value='Yes, refund ₹1,000.00']")
    page.wait_for_url("**/admin/refunds/refund/*/change/")
    assert Refund.objects.get().amount == 100_000
    page.close()


def test_finance_makes_a_link_for_a_phone_written_with_91_and_spaces(chromium, live_server, settings, shop):
    settings.GATEWAY_PUBLIC_URL = live_server.url
    page = signed_in(chromium, live_server, "finance")
    page.goto(f"{live_server.url}/admin/payments/paymentlink/add/")
    page.select_option("#id_merchant", label=str(shop.merchant))
    page.fill("#id_amount_rupees", "1,250")
    page.fill("#id_description", "Alteration of two kurtas")
    page.fill("#id_customer_phone", "+1 415 555 0100")
    page.fill("#id_valid_days", "3")
    page.click("input[name=_save]")
    error = page.locator(".field-customer_phone .errorlist").inner_text()
    assert "customer phone" in error and "+91" in error and not PaymentLink.objects.exists()

    page.fill("#id_customer_phone", "+91 99887 76655")
    page.click("input[name=_save]")
    page.locator("[data-link-url]").wait_for()
    payment = PaymentLink.objects.select_related("payment").get().payment
    assert (payment.customer_phone, payment.amount) == ("9988776655", 125_000)
    page.close()
