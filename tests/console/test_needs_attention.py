"""The console's "Needs attention" queue (gateway/console/attention.py): late approvals and their
reversals, reversals the acquirer refused (finance records how the money went back), stuck
refunds and dead webhooks."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.platform.models import AuditRecord
from payments.acquirer.sandbox.acquirer import REVERSAL_REFUSED_AMOUNT
from payments.models import Payment, PaymentEvent, Reversal
from payments.services.reversals import payment_late_approval_handle, reversal_submit
from refunds.models import Refund
from tests.support.factories import make_payment, make_refund
from webhooks.models import WebhookDelivery
from webhooks.services import event_record

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/admin/console/needs-attention/"


def late_approval(shop, *, amount: int = 50000, rrn: str = "555566667777") -> Reversal:
    payment = make_payment(shop, amount=amount, status=Payment.Status.EXPIRED)
    return payment_late_approval_handle(payment_id=payment.pk, step="card_verify_otp", bank_rrn=rrn)


def rows(html: str, attribute: str) -> int:
    return html.count(f'data-{attribute}="')


def section(html: str, key: str) -> str:
    start = html.index(f'data-testid="{key}"')
    end = html.find('data-testid="', start + 20)
    return html[start:end if end != -1 else None]


@pytest.fixture
def queue(shop):
    """One of each: a reversal on its way, one refused, a stuck refund, a dead delivery, and
    healthy things that must not show."""
    pending = late_approval(shop, rrn="111111111111")
    refused = late_approval(shop, amount=REVERSAL_REFUSED_AMOUNT, rrn="222222222222")
    assert reversal_submit(reversal_pk=refused.pk).status == Reversal.Status.FAILED
    done = late_approval(shop, rrn="333333333333")
    assert reversal_submit(reversal_pk=done.pk).status == Reversal.Status.REVERSED
    paid = make_payment(shop, amount=20000)
    stuck = make_refund(paid, refund_id="rfnd_stuck", amount=1000,
                        needs_review=True, bank_attempts=10)
    fresh = make_refund(paid, refund_id="rfnd_fresh", amount=1000)
    old = make_refund(paid, refund_id="rfnd_old", amount=1000)
    Refund.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=2))
    event = event_record(merchant=shop.merchant, event_type="payment.success", payload={"event": "payment.success"},
                         subject_id=paid.sabpaisa_txn_id)
    WebhookDelivery.objects.filter(event=event).update(status=WebhookDelivery.Status.DEAD, attempts=9)
    return {"pending": pending, "refused": refused, "done": done, "stuck": stuck, "fresh": fresh, "old": old}


def test_support_sees_what_needs_attention_and_nothing_else(as_role, queue):
    html = as_role("support").get(URL).content.decode()
    assert 'data-reversal="%s"' % queue["refused"].pk in section(html, "reversals-failed")
    assert 'data-reversal="%s"' % queue["pending"].pk in section(html, "reversals-pending")
    assert 'data-reversal="%s"' % queue["done"].pk in section(html, "reversals-done")
    stuck = section(html, "refunds-stuck")
    assert "rfnd_stuck" in stuck and "rfnd_old" in stuck and "rfnd_fresh" not in stuck
    assert rows(section(html, "webhooks-dead"), "delivery") == 1
    assert "222222222222" in html and "refused" in html
    # Support reads; recording money given back is finance's.
    assert 'name="note"' not in html


def test_the_front_page_links_to_the_queue(as_role):
    assert URL in as_role("support").get("/admin/").content.decode()


def test_finance_records_a_refused_reversal_given_back_by_hand(as_role, queue):
    finance = as_role("finance")
    refused = queue["refused"]
    assert 'name="note"' in finance.get(URL).content.decode()
    response = finance.post(URL, {"reversal": refused.pk, "note": "NEFT N123456789 to the customer's account"})
    assert response.status_code == 302
    refused.refresh_from_db()
    assert (refused.status, refused.note) == (Reversal.Status.SETTLED, "NEFT N123456789 to the customer's account")
    html = finance.get(URL).content.decode()
    assert 'data-reversal="%s"' % refused.pk not in section(html, "reversals-failed")
    assert 'data-reversal="%s"' % refused.pk in section(html, "reversals-done")
    event = PaymentEvent.objects.get(payment_id=refused.payment_id, kind=PaymentEvent.Kind.REVERSAL,
                                     to_status=Reversal.Status.SETTLED)
    assert event.from_status == Reversal.Status.FAILED and event.detail["note"].startswith("NEFT")
    assert AuditRecord.objects.filter(action="reversal.settle", object_id=str(refused.pk)).exists()


def test_a_settlement_without_a_note_is_refused_and_changes_nothing(as_role, queue):
    finance = as_role("finance")
    response = finance.post(URL, {"reversal": queue["refused"].pk, "note": "  "}, follow=True)
    assert "Not recorded" in response.content.decode()
    assert Reversal.objects.get(pk=queue["refused"].pk).status == Reversal.Status.FAILED


def test_a_reversal_already_given_back_cannot_be_settled_again(as_role, queue):
    response = as_role("finance").post(URL, {"reversal": queue["done"].pk, "note": "again"}, follow=True)
    assert "Not recorded" in response.content.decode()
    assert Reversal.objects.get(pk=queue["done"].pk).status == Reversal.Status.REVERSED


def test_support_cannot_record_money_given_back(as_role, queue):
    response = as_role("support").post(URL, {"reversal": queue["refused"].pk, "note": "NEFT N1"})
    assert response.status_code == 403
    assert Reversal.objects.get(pk=queue["refused"].pk).status == Reversal.Status.FAILED


def test_staff_without_a_role_cannot_see_the_queue(as_role):
    assert as_role(None).get(URL).status_code == 403


def test_the_payment_page_tells_the_late_approval_and_its_reversal(as_role, queue):
    reversal = queue["done"]
    html = as_role("support").get(f"/admin/payments/payment/{reversal.payment_id}/change/").content.decode()
    assert "Late approval 333333333333: reversal created PENDING" in html
    assert "Late approval 333333333333: reversal PENDING → REVERSED" in html
