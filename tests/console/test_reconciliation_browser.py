"""Issue 31's done-criterion, in a real browser: finance uploads a bank statement, sees the
exception the reconciliation found, opens the payment's story, and resolves the exception with
a note; and "why is this settlement short?" is answered in three clicks from the dashboard.
Screenshots in artifacts/ (console-recon-*.png)."""
from __future__ import annotations

import pytest

from gateway.platform.models import AuditRecord
from refunds.models import ReconException, Settlement
from tests.console.conftest import screenshot
from tests.console.settlement_data import settlement_of
from tests.console.test_browser import signed_in
from tests.support.factories import make_payment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def short_settled(shop):
    """A settlement that paid ₹240.00 of a ₹250.00 payment: its own figures add up and its
    payout reaches the bank, so the one fault is the payment settled short."""
    paid = [make_payment(shop, amount=10_000), make_payment(shop, amount=25_000)]
    settlement = settlement_of(shop, "BRW1", payments=paid)
    short_line = settlement.lines.get(payment=paid[1])
    short_line.amount = 24_000
    short_line.save(update_fields=["amount"])
    Settlement.objects.filter(pk=settlement.pk).update(gross=34_000, net=34_000 - 400 - 72)
    return Settlement.objects.get(pk=settlement.pk), paid[1]


def test_finance_uploads_a_statement_sees_the_exception_reads_the_story_and_resolves_it(
        chromium, live_server, short_settled):
    settlement, payment = short_settled
    page = signed_in(chromium, live_server, "finance")

    # The statement: the payout (₹335.28 under its UTR), as the bank prints it.
    page.goto(f"{live_server.url}/admin/console/reconciliation/exceptions/")
    page.click('[data-testid="upload-link"]')
    page.set_input_files("#id_statement", files=[{
        "name": "hdfc-november.csv", "mimeType": "text/csv",
        "buffer": f"Date,Narration,Amount,UTR\n21/11/2026,NEFT CR CASHFREE,335.28,{settlement.utr}\n".encode()}])
    screenshot(page, "recon-upload")
    page.click('[data-testid="upload"]')
    page.wait_for_selector('[data-testid="recon-exceptions"]')
    message = page.inner_text(".messagelist")
    assert "Read 1 lines of hdfc-november.csv" in message and "1 settlement matched to a bank credit" in message
    assert "1 the settled amount differs from the payment's amount" in message

    # The exception, its reason in words, in the queue.
    exception = ReconException.objects.get(kind="amount_mismatch")
    row = page.locator(f'[data-exception="{exception.pk}"]')
    assert "The settled amount differs from the payment's amount" in row.inner_text()
    assert "₹250.00 (25000 paise)" in row.inner_text() and "₹240.00 (24000 paise)" in row.inner_text()
    screenshot(page, "recon-queue")

    # Its page, then the payment's story one click away.
    row.locator("a", has_text="The settled amount differs").click()
    page.wait_for_selector('[data-testid="recon-exception"]')
    assert "Compare the payment's amount with the line" in page.inner_text("#content")
    page.click('[data-testid="named"] a[data-what="payment"]')
    page.wait_for_selector('[data-testid="story"]')
    assert page.url.endswith(f"/admin/payments/payment/{payment.pk}/change/")
    assert "PROCESSING → SUCCESS" in page.inner_text('[data-testid="story"]')
    page.go_back()

    # Resolved with a note, audited; the queue no longer lists it.
    page.wait_for_selector('[data-testid="recon-exception"]')
    page.fill("#id_note", "Partial capture agreed with the customer; the acquirer settled what was captured.")
    page.click('[data-testid="resolve"]')
    page.wait_for_selector('[data-testid="recon-exception"][data-status="resolved"]')
    assert "Resolved: The settled amount differs" in page.inner_text(".messagelist")
    assert "Partial capture agreed" in page.inner_text('[data-testid="note"]')
    screenshot(page, "recon-resolved")
    assert ReconException.objects.get(pk=exception.pk).status == "resolved"
    assert AuditRecord.objects.get(action="recon_exception.resolve").actor_name == "finance-asha"
    page.goto(f"{live_server.url}/admin/console/reconciliation/exceptions/")
    assert page.locator(f'[data-exception="{exception.pk}"]').count() == 0
    page.close()


def test_why_a_settlement_is_short_in_three_clicks_from_the_dashboard(chromium, live_server, short_settled):
    settlement, payment = short_settled
    from refunds.settlements.reconcile import reconcile

    reconcile()
    page = signed_in(chromium, live_server, "finance")
    page.goto(f"{live_server.url}/admin/console/dashboard/")
    page.click('[data-testid="short-settlements"]')                      # 1
    page.click(f'[data-settlement="{settlement.public_id}"] a')              # 2
    page.wait_for_selector('[data-testid="why"]')
    why = page.inner_text('[data-testid="why"]')
    assert "The settled amount differs from the payment's amount: expected ₹250.00 (25000 paise), found ₹240.00" in why
    screenshot(page, "recon-why-short")
    page.click(f'[data-testid="settlement-lines"] a:has-text("{payment.sabpaisa_txn_id}")')  # 3
    page.wait_for_selector('[data-testid="story"]')
    assert page.url.endswith(f"/admin/payments/payment/{payment.pk}/change/")
    page.close()
