"""A payment's page tells its whole story in time order, with the actions beside what they
act on: resend a webhook (through webhooks.services.delivery_resend, audited), start a refund."""
from __future__ import annotations

import re

import pytest
from django.test.utils import CaptureQueriesContext
from django.db import connection

from gateway.platform.models import AuditRecord
from payments.models import Payment
from refunds.models import Refund
from tests.support.factories import make_merchant, make_payment, staff_in, story_payment
from webhooks.models import WebhookDelivery
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
from tests.support.two_acquirers import both  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


def page_of(client, payment) -> str:
    response = client.get(f"/admin/payments/payment/{payment.pk}/change/")
    assert response.status_code == 200
    return response.content.decode()


def story_rows(html: str) -> list[tuple[str, str]]:
    """(category, text) of each row of the story table, in page order."""
    table = html[html.index('data-testid="story"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<tr data-category="(\w+)">(.*?)</tr>', table, flags=re.S)
    return [(category, re.sub(r"<[^>]+>", " ", body)) for category, body in rows]


@pytest.fixture
def told(shop, receiver, db):
    finance = staff_in("finance", username="priya")
    return story_payment(shop, refund_by=finance, receiver=receiver)


def test_the_story_has_every_chapter_in_time_order(as_role, told):
    rows = story_rows(page_of(as_role("support"), told))
    categories = [category for category, _ in rows]
    text = " | ".join(body for _, body in rows)
    # Created, chose a card, the acquirer, success: the payment's own events, first.
    assert categories[:2] == ["status", "status"]
    assert "created PENDING" in rows[0][1] and "PENDING → PROCESSING" in rows[1][1]
    assert "PROCESSING → SUCCESS" in text
    assert re.search(r"Acquirer answered( \w+)?: challenge", text)  # 3-D Secure asked for the OTP
    assert re.search(r"Acquirer answered( \w+)?: approved", text)
    assert "Customer sent back to the merchant (SUCCESS)" in text
    # The webhook and both its attempts: refused (HTTP 500), then delivered (HTTP 200).
    assert "Webhook payment.success to the merchant" in text
    assert re.search(r"Webhook attempt #1: failed \(HTTP 500", text)
    assert re.search(r"Webhook attempt #2: delivered \(HTTP 200", text)
    # The refund, its bank answer and its own webhook; the staff action in the audit log.
    assert "requested by priya" in text and "INITIATED → SUCCESS" in text
    assert "Webhook refund.processed to the merchant" in text
    assert "Staff priya started a refund" in text
    # Time order: each chapter after the one that caused it.
    position = {name: next(i for i, (_, body) in enumerate(rows) if name in body) for name in (
        "PENDING → PROCESSING", ": challenge", ": approved", "PROCESSING → SUCCESS",
        "Webhook payment.success", "sent back to the merchant", "attempt #1", "attempt #2", "requested by priya",
        "bank submitted", "INITIATED → SUCCESS", "Webhook refund.processed")}
    assert list(position.values()) == sorted(position.values()), position


def test_the_page_shows_what_support_needs_at_a_glance(as_role, told):
    html = page_of(as_role("support"), told)
    glance = html[html.index('data-testid="glance"'):html.index('data-testid="story"')]
    for fact in (told.sabpaisa_txn_id and "SUCCESS", told.merchant_txn_id, told.bank_rrn, "****1111",
                 "₹1,499.00 (149900 paise)", "₹500.00 (50000 paise)", "SHOP"):
        assert fact in glance, fact
    assert "Resend payment.success webhook" in glance
    assert "Refund this payment" not in glance  # support does not refund
    assert "Refunds are started by finance" in glance


def test_finance_gets_the_refund_button_beside_the_refundable_amount(as_role, told):
    html = page_of(as_role("finance"), told)
    assert f'href="/admin/refunds/refund/initiate/{told.pk}/"' in html
    assert "up to ₹999.00 (99900 paise)" in html


def test_resend_from_the_payment_page_goes_through_the_service_and_is_audited(as_role, told):
    client = as_role("support")
    delivery = WebhookDelivery.objects.get(event__subject_id=told.sabpaisa_txn_id)
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    response = client.post(f"/admin/payments/payment/{told.pk}/resend-webhook/{delivery.pk}/")
    assert response.status_code == 302
    assert response["Location"] == f"/admin/payments/payment/{told.pk}/change/#story"
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.PENDING and delivery.cycle_attempts == 0
    audit = AuditRecord.objects.get(action="webhook.resend")
    assert audit.object_id == str(delivery.pk) and audit.actor_name.startswith("support")
    html = page_of(client, told)
    assert "queued to send now" in html
    assert re.search(r"Staff support-\d+ resent a webhook", html)


def test_the_refunds_webhook_can_be_resent_from_the_payment_page_too(as_role, told):
    refund = Refund.objects.get(payment=told)
    delivery = WebhookDelivery.objects.get(event__subject_id=refund.refund_id)
    response = as_role("support").post(f"/admin/payments/payment/{told.pk}/resend-webhook/{delivery.pk}/")
    assert response.status_code == 302
    assert AuditRecord.objects.filter(action="webhook.resend", object_id=str(delivery.pk)).exists()


def test_another_payments_delivery_cannot_be_resent_through_this_page(as_role, told, receiver):
    other = make_payment(make_merchant(code="NEIGHBOUR", webhook_url=receiver.url("/n")))
    theirs = WebhookDelivery.objects.get(event__subject_id=other.sabpaisa_txn_id)
    response = as_role("support").post(f"/admin/payments/payment/{told.pk}/resend-webhook/{theirs.pk}/")
    assert response.status_code == 404
    assert not AuditRecord.objects.filter(action="webhook.resend").exists()


def test_a_resend_is_a_post(as_role, told):
    delivery = WebhookDelivery.objects.get(event__subject_id=told.sabpaisa_txn_id)
    response = as_role("support").get(f"/admin/payments/payment/{told.pk}/resend-webhook/{delivery.pk}/")
    assert response.status_code == 405


def test_an_open_payment_without_webhook_says_so(as_role, shop):
    payment = make_payment(shop, status=Payment.Status.PENDING)
    html = page_of(as_role("finance"), payment)
    assert "No webhook yet" in html
    assert "Refund this payment" not in html and "Nothing to refund: the payment is PENDING" in html


def test_the_page_costs_the_same_number_of_queries_however_long_the_story(as_role, shop, receiver):
    from refunds.services import refund_create
    from refunds.tasks import refund_process

    client = as_role("support")
    finance = staff_in("finance")
    payment = story_payment(shop, refund_by=finance, receiver=receiver)
    page_of(client, payment)  # warm the session and the content types
    with CaptureQueriesContext(connection) as one_refund:
        page_of(client, payment)
    for _ in range(3):
        result = refund_create(merchant=payment.merchant, payment=Payment.objects.get(pk=payment.pk), amount=1000,
                               reason="more", source=Refund.Source.ADMIN, actor=finance)
        refund_process(result.refund.pk)
    with CaptureQueriesContext(connection) as four_refunds:
        html = page_of(client, payment)
    assert html.count("INITIATED → SUCCESS") == 4
    assert len(four_refunds) == len(one_refund), [q["sql"][:120] for q in four_refunds.captured_queries]


def test_every_checkout_attempt_is_its_own_line_of_the_story(as_role, shop):
    # Issue 19: a declined card, a left UPI request and the card that paid, each an attempt.
    from payments.cards import CardInput
    from payments.services import hosted
    from payments.services.upi import upi_change_method, upi_pay

    payment = hosted.hosted_payment_create(merchant=shop.merchant, merchant_txn_id="ORD-ATTEMPTS", amount=50000,
                                           currency="INR", return_url="https://shop.example.in/r").payment
    fresh = lambda: Payment.objects.select_related("merchant").get(pk=payment.pk)  # noqa: E731
    hosted.hosted_card_pay(payment=fresh(), card=CardInput("4000000000000002", 12, 2039, "123"))
    upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox")
    upi_change_method(payment=fresh())
    hosted.hosted_card_pay(payment=fresh(), card=CardInput("4111111111111111", 12, 2039, "123"))
    hosted.hosted_card_verify_otp(payment=fresh(), otp="123456")
    text = " | ".join(body for _, body in story_rows(page_of(as_role("support"), payment)))
    for line in ("Attempt 1 (CARD) started", "Attempt 1 (CARD) failed: PROCESSING → PENDING",
                 "Attempt 2 (UPI) started", "Attempt 2 (UPI) left for another method: PROCESSING → PENDING",
                 "Attempt 3 (CARD) started", "PROCESSING → SUCCESS"):
        assert line in text, line


def test_the_order_the_merchant_sent_is_on_the_page_escaped(as_role, db):
    """issue 17: the optional order fields are shown, not dropped."""
    payment = make_payment(make_merchant(), status=Payment.Status.PENDING)
    Payment.objects.filter(pk=payment.pk).update(order_details={
        "customerId": "CUST-42",
        "billingAddress": {"name": "Asha Rao", "line1": "12 MG Road", "city": "Bengaluru", "postalCode": "560001"},
        "shippingSameAsBilling": True,
        "lineItems": [{"name": "<b>Masala chai</b>", "sku": "CHAI-250", "hsnCode": "0902", "quantity": 3,
                       "unitPrice": 45000},
                      {"name": "Kettle", "quantity": 1, "unitPrice": 14900}],
        "orderSummary": {"subtotal": 149900, "taxAmount": 0, "totalAmount": 149900, "discountCode": "DIWALI"},
    })
    html = page_of(as_role("support"), payment)
    assert "CUST-42" in html and "Asha Rao, 12 MG Road, Bengaluru, 560001" in html
    assert "same as billing" in html
    assert html.count('data-testid="line-item"') == 2
    assert "&lt;b&gt;Masala chai&lt;/b&gt;" in html and "<b>Masala chai</b>" not in html
    assert "₹450.00 (45000 paise)" in html and "total: ₹1,499.00 (149900 paise)" in html
    assert "discount code: DIWALI" in html


def test_a_payment_without_an_order_shows_dashes(as_role, db):
    payment = make_payment(make_merchant(), status=Payment.Status.PENDING)
    html = page_of(as_role("support"), payment)
    assert "Line items" in html and 'data-testid="line-item"' not in html


def test_a_failed_over_payment_shows_its_route_a_line_per_acquirer(as_role, shop, both):  # noqa: F811
    # Issue 33: the story showed the route as its stored JSON, keys in the database's order and
    # cut at 300 characters, which dropped the name of the acquirer that failed.
    from payments.models import AcquirerRoute
    from payments.services.upi import hosted_upi_intent

    cashfree, razorpay = both
    AcquirerRoute.objects.create(merchant_id=shop.merchant.pk, method="UPI", acquirers="razorpay,cashfree")
    payment = make_payment(shop, status=Payment.Status.PENDING, amount=25000)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="9876543210", customer_email="asha@example.in")
    razorpay.unavailable = True
    hosted_upi_intent(payment_id=payment.pk)
    html = page_of(as_role("support"), payment)
    row = next(body for _, body in re.findall(r'<tr data-category="(\w+)">(.*?)</tr>', html, flags=re.S)
               if "routed to cashfree" in body)
    said = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", row, flags=re.S)
    assert [term for term, _ in said][:3] == ["route", "razorpay", "cashfree"]
    assert said[0][1] == "razorpay → cashfree"
    assert said[1][1].startswith("failed technically (AcquirerUnavailable): Razorpay find order:")
    assert said[2][1] == "took it (failover: razorpay AcquirerUnavailable)"
