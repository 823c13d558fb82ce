"""Issue 20's done-criterion for support, in a real browser: a finance person refunds ₹100 of
a ₹499 payment by typing 100, after a confirmation that says ₹100.00."""
from __future__ import annotations

import pytest

from refunds.models import Refund
from tests.support.factories import make_merchant, make_success_payment, staff_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "console-refund-pw-1"


def test_finance_refunds_100_rupees_by_typing_100(chromium, live_server):
    payment = make_success_payment(make_merchant(code="CHAI-HOUSE"), amount=49_900)
    staff_in("finance", username="finance-meera", password=PASSWORD)
    page = chromium.new_page(viewport={"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/admin/login/?next=/admin/refunds/refund/initiate/{payment.pk}/")
    page.fill("#id_username", "finance-meera")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")

    assert page.input_value("input[name=amount]") == ""  # nothing filled in for them
    assert "₹499.00 (49900 paise)" in page.inner_text("#content")
    page.fill("input[name=amount]", "100")
    page.fill("input[name=reason]", "one item returned")
    page.click("input[type=submit][value=Continue]")

    question = page.inner_text("#confirm-amount")
    assert "Refund ₹100.00 (10000 paise)" in question and not Refund.objects.exists()
    page.click("input[type=submit][value='Yes, refund ₹100.00']")
    page.wait_for_url("**/admin/refunds/refund/*/change/")
    assert "₹100.00 (10000 paise)" in page.inner_text(".messagelist")
    assert Refund.objects.get().amount == 10_000
    page.close()
