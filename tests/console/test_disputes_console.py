"""Disputes in the console (gateway/console/dispute_views.py): the list by time left, a dispute's
page, finance's accept and evidence, support's refusal, the Needs attention queue, the dashboard's
open disputes and amount at risk, the payment's story, the staging test dispute; and the enquiry's
openDispute."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from gateway.platform.models import AuditRecord
from payments.acquirer.sandbox import disputes as sandbox_disputes
from payments.models import Payment, SandboxDispute  # noqa: F401
from refunds.disputes.sweep import disputes_sweep
from refunds.models import Dispute
from tests.support.disputes import PDF, evidence_dir  # noqa: F401 - the fixture, by name
from tests.support.factories import make_success_payment

pytestmark = pytest.mark.django_db


def disputed(merchant, *, hours_left: float | None = None) -> Dispute:
    payment = make_success_payment(merchant, amount=sandbox_disputes.DISPUTED_AMOUNT_WON)
    disputes_sweep()
    dispute = Dispute.objects.get(payment=payment)
    if hours_left is not None:
        respond_by = timezone.now() + timedelta(hours=hours_left)
        SandboxDispute.objects.filter(payment=payment).update(respond_by=respond_by)
        Dispute.objects.filter(pk=dispute.pk).update(respond_by=respond_by)
        disputes_sweep()
    return Dispute.objects.get(pk=dispute.pk)


def test_the_list_orders_disputes_by_time_left_and_marks_the_alert(as_role, merchant):
    later = disputed(merchant, hours_left=100)
    sooner = disputed(merchant, hours_left=30)
    html = as_role("support").get("/admin/console/disputes/").content.decode()
    assert html.index(sooner.dispute_id) < html.index(later.dispute_id)
    assert html.count('data-alert="deadline"') == 1 and "answer now" in html
    assert 'data-testid="open-test-dispute"' not in html  # support may not open one


def test_finance_accepts_from_the_dispute_page_and_it_is_audited(as_role, merchant):
    dispute = disputed(merchant)
    finance = as_role("finance")
    page = finance.get(f"/admin/console/disputes/{dispute.dispute_id}/").content.decode()
    assert 'data-testid="accept-form"' in page and "Delivery/Service Proof" in page
    answer = finance.post(f"/admin/console/disputes/{dispute.dispute_id}/accept")
    assert answer.status_code == 302
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.ACCEPTED
    assert AuditRecord.objects.get(action="dispute.accept").actor is not None


def test_finance_sends_evidence_from_the_dispute_page(as_role, merchant, evidence_dir):
    dispute = disputed(merchant)
    finance = as_role("finance")
    answer = finance.post(f"/admin/console/disputes/{dispute.dispute_id}/evidence",
                          {"doc_type": "Delivery/Service Proof", "note": "courier receipt",
                           "file": SimpleUploadedFile("pod.pdf", PDF, content_type="application/pdf")})
    assert answer.status_code == 302
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.UNDER_REVIEW and dispute.evidence_files.count() == 1
    refused = finance.post(f"/admin/console/disputes/{dispute.dispute_id}/evidence",
                           {"doc_type": "Delivery/Service Proof",
                            "file": SimpleUploadedFile("pod.pdf", b"not a pdf", content_type="application/pdf")},
                           follow=True)
    assert "Not" in refused.content.decode()


def test_support_reads_but_cannot_answer(as_role, merchant):
    dispute = disputed(merchant)
    support = as_role("support")
    page = support.get(f"/admin/console/disputes/{dispute.dispute_id}/").content.decode()
    assert 'data-testid="accept-form"' not in page
    refused = support.post(f"/admin/console/disputes/{dispute.dispute_id}/accept")
    assert refused.status_code == 403
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.NEEDS_RESPONSE


def test_needs_attention_and_the_dashboard_show_disputes_and_the_money_at_risk(as_role, merchant):
    dispute = disputed(merchant, hours_left=20)
    support = as_role("support")
    queue = support.get("/admin/console/needs-attention/").content.decode()
    start = queue.index('data-testid="disputes-due"')
    assert dispute.dispute_id in queue[start:] and 'data-alert="deadline"' in queue[start:]
    dashboard = support.get("/admin/console/dashboard/").content.decode()
    assert 'data-testid="disputes-panel"' in dashboard and "₹1,000.21 (100021 paise)" in dashboard


def test_the_payments_story_shows_the_dispute_from_opening_to_outcome(as_role, merchant):
    dispute = disputed(merchant)
    as_role("finance").post(f"/admin/console/disputes/{dispute.dispute_id}/accept")
    page = as_role("support").get(f"/admin/payments/payment/{dispute.payment_id}/change/").content.decode()
    assert f"Dispute {dispute.dispute_id} (Chargeback) of ₹1,000.21 (100021 paise) opened" in page
    assert "NEEDS_RESPONSE → ACCEPTED" in page


def test_staff_open_a_test_dispute_on_a_sandbox_payment(as_role, merchant):
    payment = make_success_payment(merchant, amount=50_000)
    finance = as_role("finance")
    answer = finance.post("/admin/console/disputes/", {"sabpaisaTxnId": payment.sabpaisa_txn_id})
    dispute = Dispute.objects.get(payment=payment)
    assert answer.status_code == 302 and answer["Location"].endswith(f"/disputes/{dispute.dispute_id}/")
    assert dispute.status == Dispute.Status.NEEDS_RESPONSE and dispute.amount == 50_000


def test_a_test_dispute_is_refused_on_a_payment_another_acquirer_took(as_role, merchant, settings):
    # The sandbox configured and Cashfree beside it: a payment Cashfree took is disputed at
    # Cashfree or nowhere; the sandbox used to open its dispute on it all the same.
    from payments.acquirer import _load

    settings.GATEWAY_ACQUIRERS = ["sandbox", "cashfree"]
    settings.CASHFREE_CLIENT_ID, settings.CASHFREE_CLIENT_SECRET = "cf-test-id", "cf-test-secret"  # never called
    _load.cache_clear()
    payment = make_success_payment(merchant, amount=50_000)
    Payment.objects.filter(pk=payment.pk).update(acquirer="cashfree")
    finance = as_role("finance")
    answer = finance.post("/admin/console/disputes/", {"sabpaisaTxnId": payment.sabpaisa_txn_id}, follow=True)
    assert not Dispute.objects.filter(payment=payment).exists() and not SandboxDispute.objects.exists()
    assert "taken by cashfree, not the sandbox" in answer.content.decode()
    _load.cache_clear()


def test_the_test_dispute_is_offered_only_in_staging_with_the_sandbox(merchant, settings):
    from gateway.console.dispute_views import _can_open_test
    from tests.support.factories import staff_in

    finance = staff_in("finance")
    assert _can_open_test(finance) and not _can_open_test(staff_in("support"))
    settings.IS_PRODUCTION = True
    assert not _can_open_test(finance)


def test_the_enquiry_shows_the_open_dispute_until_it_is_decided(api, merchant, as_role):
    dispute = disputed(merchant)
    payment = Payment.objects.get(pk=dispute.payment_id)
    lookup = {"merchantId": merchant.code, "merchantTxnId": payment.merchant_txn_id}
    body = api.get("/api/v2/payments", lookup, HTTP_X_API_KEY=merchant.api_key).json()
    assert body["openDispute"] == {"disputeId": dispute.dispute_id, "status": "NEEDS_RESPONSE", "type": "CHARGEBACK",
                                   "amount": 100021,
                                   "respondBy": dispute.respond_by.isoformat().replace("+00:00", "Z")}
    as_role("finance").post(f"/admin/console/disputes/{dispute.dispute_id}/accept")
    body = api.post("/api/v2/payments/enquiry", lookup, format="json", HTTP_X_API_KEY=merchant.api_key).json()
    assert body["openDispute"] is None
