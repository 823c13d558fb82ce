"""The done-criterion, in a real browser: a support person given only a customer's phone
number or a bank reference finds the payment, sees everything that happened to it and resends
its webhook, without help. Plus the dashboard, the export and a refusal, as screenshots in
artifacts/ (looked at by the engineer who wrote them)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.platform.models import AuditRecord
from payments.models import Payment
from refunds.models import Refund
from tests.console.conftest import screenshot
from tests.support.factories import make_merchant, make_payment, make_refund, staff_in, story_payment
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "console-browser-pw-1"
DESKTOP = {"width": 1366, "height": 900}


def signed_in(chromium, live_server, role: str):
    staff_in(role, username=f"{role}-asha", password=PASSWORD)
    page = chromium.new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", f"{role}-asha")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#find-payment")
    return page


@pytest.fixture
def busy_day(shop, receiver):
    """The payment a customer calls about, among a day's other traffic."""
    finance = staff_in("finance", username="priya")
    payment = story_payment(shop, refund_by=finance, receiver=receiver, phone="+91 98765 43210")
    for status, mode in (("SUCCESS", "UPI"), ("SUCCESS", "UPI"), ("FAILED", "UPI"), ("SUCCESS", "NB"),
                         ("EXPIRED", "UPI"), ("SUCCESS", "WALLET"), ("FAILED", "CARD")):
        make_payment(shop, status=status, payment_mode=mode, bank_code="SBIN" if mode in ("NB", "WALLET") else "",
                     customer_phone="9123456780")
    stuck = make_payment(shop, status=Payment.Status.PROCESSING)
    Payment.objects.filter(pk=stuck.pk).update(expires_at=timezone.now() - timedelta(minutes=20))
    late = make_refund(make_payment(shop), amount=2_500)
    Refund.objects.filter(pk=late.pk).update(created_at=timezone.now() - timedelta(minutes=40))
    broken = make_merchant(code="BROKENHOOK", webhook_url=receiver.url("/down"))
    receiver.respond_with(503)
    delivery_attempt_run(WebhookDelivery.objects.get(event__subject_id=make_payment(broken).sabpaisa_txn_id).pk)
    receiver.respond_with(200)
    return payment


@pytest.mark.parametrize("given", ["phone number", "bank reference"])
def test_support_finds_a_payment_reads_its_story_and_resends_its_webhook(chromium, live_server, busy_day, given):
    payment = busy_day
    page = signed_in(chromium, live_server, "support")
    if given == "phone number":
        screenshot(page, "front-page")
    term = "98765 43210" if given == "phone number" else payment.bank_rrn
    page.fill("#console-q", term)
    page.keyboard.press("Enter")

    page.wait_for_selector('[data-testid="story"]')
    assert page.url.endswith(f"/admin/payments/payment/{payment.pk}/change/")
    expected = "customer phone" if given == "phone number" else "bank reference (RRN)"
    assert f"Found {payment.sabpaisa_txn_id} by its {expected}" in page.inner_text(".messagelist")
    story = page.inner_text('[data-testid="story"]')
    for chapter in ("created PENDING", "PENDING → PROCESSING", "Acquirer answered", "PROCESSING → SUCCESS",
                    "Customer sent back to the merchant", "Webhook attempt #1: failed (HTTP 500",
                    "Webhook attempt #2: delivered (HTTP 200", "requested by priya", "INITIATED → SUCCESS",
                    "Staff priya started a refund"):
        assert chapter in story, chapter
    screenshot(page, f"payment-found-by-{given.replace(' ', '-')}")

    page.click("text=Resend payment.success webhook")
    page.wait_for_selector(".messagelist .success")
    assert "queued to send now" in page.inner_text(".messagelist")
    assert page.url.endswith("#story")
    assert "resent a webhook" in page.inner_text('[data-testid="story"]')
    delivery = WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id)
    assert delivery.status == WebhookDelivery.Status.PENDING
    assert AuditRecord.objects.get(action="webhook.resend").actor_name == "support-asha"
    screenshot(page, f"payment-resent-{given.replace(' ', '-')}")
    page.close()


def test_a_phone_with_several_payments_lists_them(chromium, live_server, busy_day):
    page = signed_in(chromium, live_server, "support")
    page.fill("#console-q", "91234 56780")
    page.keyboard.press("Enter")
    page.wait_for_selector("#result_list")
    assert page.locator("#result_list tbody tr").count() == 6  # the expired one never got a phone
    assert "customer phone" in page.inner_text('[data-testid="searched-as"]')
    screenshot(page, "search-list")
    page.close()


def test_the_dashboard_in_a_browser(chromium, live_server, busy_day):
    page = signed_in(chromium, live_server, "support")
    page.click("text=Operations dashboard")
    page.wait_for_selector('[data-testid="dashboard"]')
    charts = page.locator("svg[role=img]")
    assert charts.count() == 3
    for index in range(3):
        box = charts.nth(index).bounding_box()
        assert box and box["width"] > 300 and box["height"] > 50  # drawn, not collapsed
    assert "BROKENHOOK" in page.inner_text('[data-testid="webhook-health"]')
    assert "Payments stuck past their expiry: 1" in page.inner_text('[data-testid="stuck-payments"]')
    assert "Refunds pending over 15 minutes: 1" in page.inner_text('[data-testid="late-refunds"]')
    screenshot(page, "dashboard")
    page.close()


def test_finance_previews_and_downloads_a_settlement(chromium, live_server, busy_day):
    page = signed_in(chromium, live_server, "finance")
    page.goto(f"{live_server.url}/admin/console/settlement-export/")
    page.select_option("#id_merchant", "SHOP")
    page.fill("#id_date", timezone.localdate().isoformat())
    page.click("input[value='Preview totals']")
    page.wait_for_selector('[data-testid="preview"]')
    assert "payments succeeded" in page.inner_text('[data-testid="preview"]').lower()
    screenshot(page, "settlement-export")
    with page.expect_download() as download:
        page.click('[data-testid="download"]')
    assert download.value.suggested_filename == f"settlement-SHOP-{timezone.localdate().isoformat()}.csv"
    text = open(download.value.path(), encoding="utf-8").read()
    assert text.startswith("record_type,merchant_id,date,") and "\nnet,SHOP," in text.replace("\r\n", "\n")
    page.close()


def test_support_refused_a_refund_sees_a_page_not_json(chromium, live_server, busy_day):
    page = signed_in(chromium, live_server, "support")
    response = page.goto(f"{live_server.url}/admin/refunds/refund/initiate/{busy_day.pk}/")
    assert response.status == 403
    assert "Permission needed" in page.inner_text("#content")
    assert "finance" in page.inner_text("#content")
    screenshot(page, "forbidden")
    page.close()
