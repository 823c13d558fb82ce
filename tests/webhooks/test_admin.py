"""The delivery log in the admin: per merchant and per payment, attempts inline, resend,
signature explainer, test event."""
import re

import pytest
from django.contrib.admin.utils import quote
from django.db import transaction
from django.test import override_settings
from django.urls import reverse
from django.utils.html import escape

from gateway.platform.models import AuditRecord
from tests.support.factories import make_merchant
from tests.support.receiver import Reply
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import delivery_attempt_run, event_record
from webhooks.tasks import delivery_attempt

CHANGELIST = "admin:webhooks_webhookdelivery_changelist"


def record(merchant, subject_id):
    with transaction.atomic():
        return event_record(merchant=merchant, event_type="payment.success",
                            payload={"event": "payment.success", "txn_id": subject_id}, subject_id=subject_id)


@pytest.fixture
def delivered(hooked, receiver):
    event = record(hooked.merchant, "SPTXN1")
    return delivery_attempt_run(event.deliveries.get().pk)


def test_the_log_filters_by_payment_and_by_merchant(admin_client, hooked, receiver):
    other = make_merchant(webhook_url=receiver.url("/other"))
    mine, theirs = record(hooked.merchant, "SPTXN1"), record(other.merchant, "SPTXN2")

    page = admin_client.get(reverse(CHANGELIST), {"event__subject_id": "SPTXN1"})
    assert page.status_code == 200
    assert mine.id in page.content.decode() and theirs.id not in page.content.decode()

    page = admin_client.get(reverse(CHANGELIST), {"merchant__id__exact": other.merchant.pk})
    assert theirs.id in page.content.decode() and mine.id not in page.content.decode()

    page = admin_client.get(reverse(CHANGELIST), {"q": "SPTXN2"})
    assert theirs.id in page.content.decode() and mine.id not in page.content.decode()


@override_settings(WEBHOOK_RETRY_SCHEDULE=[0])
def test_the_delivery_page_shows_every_attempt_and_explains_the_signature(admin_client, hooked, receiver):
    receiver.respond_with(500, 200)
    event = record(hooked.merchant, "SPTXN1")
    delivery = delivery_attempt_run(event.deliveries.get().pk)
    delivery = delivery_attempt_run(delivery.pk)
    last = delivery.attempt_rows.order_by("-number").first()
    facts = last.signed_string_facts(event.body.encode())

    page = admin_client.get(reverse("admin:webhooks_webhookdelivery_change", args=[delivery.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count("HTTP 500") >= 1 and "delivered" in html  # both attempts inline
    assert escape(last.signature_header) in html and facts["sha256"] in html
    assert f"{facts['length']} bytes" in html
    assert facts["length"] == len(last.timestamp_ms) + 1 + len(event.body)
    assert "Resend now" in html


def test_resend_now_goes_through_the_service_and_is_audited(admin_client, delivered, receiver):
    response = admin_client.post(reverse("admin:webhooks_webhookdelivery_resend", args=[delivered.pk]))
    assert response.status_code == 302
    delivered.refresh_from_db()
    assert delivered.status == WebhookDelivery.Status.PENDING
    assert AuditRecord.objects.filter(action="webhook.resend", object_id=str(delivered.pk)).exists()

    # The list action does the same for a selection.
    delivery_attempt_run(delivered.pk)
    response = admin_client.post(reverse(CHANGELIST), {"action": "resend_now", "_selected_action": [delivered.pk]})
    assert response.status_code == 302
    assert AuditRecord.objects.filter(action="webhook.resend").count() == 2
    assert receiver.count == 2


def test_resend_is_refused_without_permission(client, django_user_model, delivered):
    staff = django_user_model.objects.create_user("viewer", password="pw-viewer-123", is_staff=True)
    client.force_login(staff)
    response = client.post(reverse("admin:webhooks_webhookdelivery_resend", args=[delivered.pk]))
    assert response.status_code == 403  # the console's HTML 403 page, not the API's envelope
    assert not AuditRecord.objects.filter(action="webhook.resend").exists()


def test_send_a_test_event_from_the_console_queues_it_and_shows_where_the_answer_appears(
        admin_client, hooked, receiver):
    page = admin_client.get(reverse("admin:webhooks_webhookdelivery_send_test"))
    assert page.status_code == 200 and hooked.code in page.content.decode()
    response = admin_client.post(reverse("admin:webhooks_webhookdelivery_send_test"),
                                 {"merchant": hooked.merchant.pk}, follow=True)
    event = WebhookEvent.objects.get(event_type="webhook.test")
    delivery = event.deliveries.get()
    # The answer page is the delivery's own, and says the event was queued, not sent.
    assert response.redirect_chain[-1][0] == reverse("admin:webhooks_webhookdelivery_change", args=[delivery.pk])
    assert f"Test event {event.id} queued" in response.content.decode()
    assert receiver.count == 0 and not delivery.attempt_rows.exists()
    assert AuditRecord.objects.filter(action="webhook.test_send").exists()

    delivery_attempt(delivery.pk)  # the Celery task the commit queued, run here
    (request,) = receiver.requests
    assert request.headers["X-Service-Event-Id"] == event.id
    page = admin_client.get(reverse("admin:webhooks_webhookdelivery_change", args=[delivery.pk]))
    assert "delivered" in page.content.decode() and escape(request.headers["X-Service-Signature"]) in \
        page.content.decode()


@override_settings(WEBHOOK_TIMEOUT_SECONDS=10)
def test_a_test_event_to_a_hanging_address_does_not_hold_the_console_request(admin_client, hooked, receiver):
    receiver.respond_with(Reply(hang=True))
    response = admin_client.post(reverse("admin:webhooks_webhookdelivery_send_test"), {"merchant": hooked.merchant.pk})
    assert response.status_code == 302
    delivery = WebhookDelivery.objects.get(event__event_type="webhook.test")
    # Nothing was attempted in the request: no attempt row, nothing arrived at the address.
    assert delivery.status == WebhookDelivery.Status.PENDING
    assert not delivery.attempt_rows.exists() and receiver.count == 0


def test_the_event_pages_render(admin_client, delivered):
    assert admin_client.get(reverse("admin:webhooks_webhookevent_changelist")).status_code == 200
    page = admin_client.get(reverse("admin:webhooks_webhookevent_change", args=[quote(delivered.event_id)]))
    assert page.status_code == 200 and escape(delivered.event.body) in page.content.decode()


def test_the_delivery_page_links_to_an_event_whose_id_looks_like_an_admin_escape(admin_client, hooked):
    # The admin reads "_23" in a URL as "#": an id such as evt_23... (about 1 in 40 of them)
    # needs its link quoted, or the event page says it does not exist.
    with transaction.atomic():
        event = event_record(merchant=hooked.merchant, event_type="payment.success", event_id="evt_23" + "a" * 22,
                             payload={"event": "payment.success"}, subject_id="SPTXN9")
    delivery = event.deliveries.get()
    page = admin_client.get(reverse("admin:webhooks_webhookdelivery_change", args=[delivery.pk])).content.decode()
    link = re.search(r'href="([^"]*webhookevent/[^"]+/change/)"', page).group(1)
    event_page = admin_client.get(link)
    assert event_page.status_code == 200 and event.id in event_page.content.decode()


@pytest.mark.django_db
def test_the_type_filter_offers_every_event_type_the_apps_registered(admin_client):
    # webhooks imports neither payments nor refunds: each registers its types when it is ready.
    from payments.payloads import EVENT_TYPES as PAYMENT_EVENT_TYPES
    from refunds.disputes.payloads import EVENT_TYPES as DISPUTE_EVENT_TYPES
    from refunds.payloads import EVENT_TYPES as REFUND_EVENT_TYPES

    html = admin_client.get(reverse(CHANGELIST)).content.decode()
    offered = set(re.findall(r"[?&]amp;event_type=([a-z.]+)|\?event_type=([a-z.]+)", html))
    offered = {name for pair in offered for name in pair if name}
    assert offered == {*PAYMENT_EVENT_TYPES.values(), *REFUND_EVENT_TYPES.values(), *DISPUTE_EVENT_TYPES,
                       "webhook.test"}
