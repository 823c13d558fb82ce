"""Issue 32's browser criterion: finance sees the deadline alert in Needs attention, opens the
dispute, uploads evidence, and the merchant's webhook receiver (a real HTTP server on loopback)
gets dispute.updated, signed. Screenshots in artifacts/ (console-dispute-*.png)."""
from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.acquirer.sandbox import disputes as sandbox_disputes
from payments.models import SandboxDispute
from refunds.disputes.sweep import deadline_alerts_raise, disputes_sweep
from refunds.models import Dispute
from tests.console.conftest import deliver_all, screenshot
from tests.console.test_browser import signed_in
from tests.support.disputes import PDF, evidence_dir  # noqa: F401 - the fixture, by name
from tests.support.factories import make_success_payment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_finance_sees_the_alert_opens_the_dispute_uploads_evidence_and_the_merchant_hears(
        chromium, live_server, shop, receiver, evidence_dir):
    payment = make_success_payment(shop, amount=sandbox_disputes.DISPUTED_AMOUNT_WON)
    disputes_sweep()
    dispute = Dispute.objects.get(payment=payment)
    # The processor's deadline is 30 hours away: inside the alert's 48 hours.
    respond_by = timezone.now() + timedelta(hours=30)
    SandboxDispute.objects.filter(payment=payment).update(respond_by=respond_by)
    Dispute.objects.filter(pk=dispute.pk).update(respond_by=respond_by)
    assert deadline_alerts_raise() == 1
    deliver_all(payment)
    receiver.wait_for(2)  # the payment's own payment.success, and dispute.opened
    assert "dispute.opened" in [r.headers["X-Service-Event-Type"] for r in receiver.requests]

    page = signed_in(chromium, live_server, "finance")
    page.goto(f"{live_server.url}/admin/console/needs-attention/")
    row = page.locator(f'[data-testid="disputes-due"] [data-dispute="{dispute.dispute_id}"]')
    assert row.get_attribute("data-alert") == "deadline"
    assert "within 48 hours, no answer" in row.inner_text()
    screenshot(page, "dispute-alert")

    row.locator("a", has_text=dispute.dispute_id).click()
    page.wait_for_selector('[data-testid="dispute"]')
    assert "answer now" in page.inner_text('[data-testid="deadline-alert"]')
    page.select_option("#id_doc_type", "Delivery/Service Proof")
    page.set_input_files("#id_file", files=[{"name": "proof-of-delivery.pdf", "mimeType": "application/pdf",
                                             "buffer": PDF}])
    page.fill("#id_note", "signed by the customer at the door")
    screenshot(page, "dispute-page")
    page.click('[data-testid="evidence-form"] input[type=submit]')
    page.wait_for_selector('[data-testid="dispute"][data-status="UNDER_REVIEW"]')
    assert "Done: the dispute is UNDER_REVIEW." in page.inner_text(".messagelist")
    assert "proof-of-delivery.pdf" in page.inner_text('[data-testid="evidence-files"]')
    screenshot(page, "dispute-evidence-sent")

    deliver_all(payment)
    requests = receiver.wait_for(3)
    updated = requests[-1]
    assert updated.headers["X-Service-Event-Type"] == "dispute.updated"
    timestamp, signature = updated.headers["X-Service-Signature"].split(".", 1)
    digest = hmac.new(shop.webhook_secret.encode(), timestamp.encode() + b"." + updated.body, hashlib.sha256).digest()
    assert hmac.compare_digest(base64.b64encode(digest).decode(), signature)
    body = updated.json()
    assert body["disputeId"] == dispute.dispute_id and body["status"] == "UNDER_REVIEW"
    assert body["evidenceSubmitted"] is True and body["sabpaisaTxnId"] == payment.sabpaisa_txn_id
