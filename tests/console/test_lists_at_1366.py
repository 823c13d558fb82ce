"""Issue 20: at 1,366 pixels wide the payment and delivery lists show the columns support
reads (customer, amount, status, time; a delivery's status) without sideways scrolling, and a
search with many matches can be narrowed by day, status and method in place. The screenshots go
to artifacts/, and with UPDATE_DOC_SCREENSHOTS=1 to docs/screenshots/ (docs/console.md and
docs/webhooks.md show them)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from payments.models import Payment
from tests.console.conftest import ARTIFACTS
from tests.support.factories import make_merchant, make_payment, staff_in
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "console-lists-pw-1"
DESKTOP = {"width": 1366, "height": 900}
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def signed_in(chromium, live_server):
    staff_in("support", username="support-ravi", password=PASSWORD)
    page = chromium.new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", "support-ravi")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#find-payment")
    return page


def hidden_columns(page) -> list[str]:
    """The result table's column headers whose right edge is past the window's, and whether
    the page scrolls sideways at all."""
    return page.evaluate("""() => {
        const hidden = [...document.querySelectorAll('#result_list thead th')]
            .filter(th => th.getBoundingClientRect().right > window.innerWidth)
            .map(th => th.innerText.trim());
        if (document.documentElement.scrollWidth > window.innerWidth) hidden.push('(page scrolls sideways)');
        const list = document.querySelector('#changelist .results');
        if (list && list.scrollWidth > list.clientWidth) hidden.push('(list scrolls sideways)');
        return hidden;
    }""")


def shoot(page, name: str) -> None:
    """Into artifacts/ (ignored by git) on every run; into docs/screenshots/ as well with
    UPDATE_DOC_SCREENSHOTS=1, so that a test run leaves no tracked file changed."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    if os.environ.get("UPDATE_DOC_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


@pytest.fixture
def a_calling_customer(receiver):
    """Many payments of one phone number, of different methods and outcomes, as when a
    customer who pays often calls about one of them."""
    shop = make_merchant(code="KIRANA-STORE-MUMBAI", name="Kirana Store, Mumbai", webhook_url=receiver.url("/hooks"))
    receiver.respond_with(*([200] * 40))
    for index, (status, mode) in enumerate([("SUCCESS", "UPI"), ("FAILED", "CARD"), ("SUCCESS", "CARD"),
                                            ("EXPIRED", "UPI"), ("SUCCESS", "NB"), ("FAILED", "UPI"),
                                            ("SUCCESS", "WALLET"), ("PENDING", "")] * 2):
        payment = make_payment(shop, status=status, payment_mode=mode, amount=149_900 + index * 10_000,
                               customer_phone="9876543210", customer_email=f"meenakshi.sundaram.{index}@example.co.in",
                               customer_name="Meenakshi Sundaram", card_last4="1111" if mode == "CARD" else "",
                               merchant_txn_id=f"ORDER-2026-11-{index:04d}-MUMBAI-WEB")
        for delivery in WebhookDelivery.objects.filter(event__subject_id=payment.sabpaisa_txn_id):
            delivery_attempt_run(delivery.pk)
    return shop


def test_the_payment_list_shows_support_columns_without_scrolling_at_1366(chromium, live_server, a_calling_customer):
    page = signed_in(chromium, live_server)
    page.goto(f"{live_server.url}/admin/payments/payment/?q=9876543210")
    headers = [th.strip().lower() for th in page.locator("#result_list thead th").all_inner_texts()]
    for column in ("customer", "amount", "status", "created"):
        assert any(column in header for header in headers), (column, headers)
    shoot(page, "console-payments-1366")
    assert hidden_columns(page) == []
    page.close()


def test_the_delivery_list_shows_status_without_scrolling_at_1366(chromium, live_server, a_calling_customer):
    page = signed_in(chromium, live_server)
    page.goto(f"{live_server.url}/admin/webhooks/webhookdelivery/")
    headers = [th.strip().lower() for th in page.locator("#result_list thead th").all_inner_texts()]
    assert "status" in headers and any("created" in h for h in headers), headers
    shoot(page, "console-deliveries-1366")
    assert hidden_columns(page) == []
    page.close()


def test_a_search_with_many_matches_is_narrowed_by_status_method_and_day_in_place(chromium, live_server,
                                                                                   a_calling_customer):
    page = signed_in(chromium, live_server)
    page.goto(f"{live_server.url}/admin/payments/payment/?q=9876543210")
    bar = page.locator('[data-testid="narrow-search"]')
    mine = Payment.objects.filter(customer_phone="9876543210")
    assert page.locator("#result_list tbody tr").count() == mine.count() > 10
    bar.locator("select[name=status__exact]").select_option("FAILED")
    bar.locator("input[type=submit]").click()
    page.wait_for_load_state()
    assert "q=9876543210" in page.url and page.locator("#result_list tbody tr").count() == mine.filter(status="FAILED").count() == 4
    shoot(page, "console-search-narrowed-1366")
    bar = page.locator('[data-testid="narrow-search"]')
    bar.locator("select[name=method]").select_option("UPI")
    today = page.evaluate("() => new Date(Date.now() + 330 * 60000).toISOString().slice(0, 10)")  # IST
    bar.locator("input[name=created_at_from]").fill(today)
    bar.locator("input[type=submit]").click()
    page.wait_for_load_state()
    statuses = page.locator('#result_list [data-status]').all_inner_texts()
    methods = page.locator("#result_list td.field-method").all_inner_texts()
    assert statuses == ["FAILED", "FAILED"] and methods == ["UPI", "UPI"]
    # Back to "any" status: the search stays, the empty choice does not empty the list.
    bar = page.locator('[data-testid="narrow-search"]')
    bar.locator("select[name=status__exact]").select_option("")
    bar.locator("input[type=submit]").click()
    page.wait_for_load_state()
    assert "status__exact" not in page.url and "q=9876543210" in page.url
    assert page.locator("#result_list tbody tr").count() == mine.filter(payment_mode="UPI").count() > 2
    page.close()


def test_the_webhook_inbox_shows_verified_deliveries_and_counts_a_refused_one(chromium, live_server, settings):
    import urllib.error
    import urllib.request

    from webhooks.inbox import merchant_point_to_inbox
    from webhooks.services import webhook_test_send

    settings.GATEWAY_PUBLIC_URL = live_server.url
    shop = make_merchant(code="DEMO", name="Demo Store")
    address = merchant_point_to_inbox(merchant=shop.merchant, actor="test")
    shop.merchant.refresh_from_db()
    payment = make_payment(shop, status="SUCCESS", payment_mode="UPI", customer_phone="9876543210")
    for delivery in WebhookDelivery.objects.filter(event__subject_id=payment.sabpaisa_txn_id):
        delivery_attempt_run(delivery.pk)
    # Queued by webhook_test_send (issue 18); delivery_attempt_run is what the queued task does.
    test_delivery = delivery_attempt_run(webhook_test_send(merchant=shop.merchant, actor=None).pk)
    assert test_delivery.status == WebhookDelivery.Status.DELIVERED
    forged = urllib.request.Request(address, data=b'{"event":"payment.success"}', method="POST", headers={
        "Content-Type": "application/json", "X-Service-Signature": "1700000000000.bm90IGEgc2lnbmF0dXJl"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(forged, timeout=10)
    assert refused.value.code == 401

    page = chromium.new_page(viewport=DESKTOP)
    page.goto(address)
    verdicts = page.locator("article .verdict").all_inner_texts()
    assert verdicts == ["✓ Signature verified", "✓ Signature verified"]  # the forged POST is not kept
    assert page.locator("#refused").get_attribute("data-refused") == "1"
    assert "beyond the 300 s" in page.locator("#refused .reason").inner_text()
    page.locator("article summary").first.click()  # the newest delivery's headers and body
    shoot(page, "webhook-inbox")
    page.close()
