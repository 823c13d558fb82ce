"""Payment links in the console (issue 19): finance creates one (amount, description, the
customer's phone or email, up to 30 days) and cancels it while unpaid; every role reads them;
each action is audited, and cancelling is a status change with its event and webhook."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.platform.models import AuditRecord
from payments.models import Payment, PaymentEvent, PaymentLink
from payments.services.links import LinkRequest, payment_link_create
from payments.services.upi import upi_pay
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

ADD = "/admin/payments/paymentlink/add/"


def link_form(shop, **changes) -> dict:
    data = {"merchant": shop.merchant.pk, "amount_rupees": "2499.50", "description": "Invoice 1042: tailoring",
            "customer_phone": "9876543210", "customer_email": "", "valid_days": "10"}
    data.update(changes)
    return data


def a_link(shop, **fields) -> PaymentLink:
    request = LinkRequest(amount=fields.pop("amount", 249_950), description="Invoice 1042",
                          customer_email="asha@example.com", **fields)
    return payment_link_create(merchant=shop.merchant, request=request, actor=None)


def test_finance_creates_a_link_and_sees_the_address_to_send(as_role, shop, settings):
    settings.GATEWAY_PUBLIC_URL = "https://pay.example.in"
    console = as_role("finance")
    response = console.post(ADD, link_form(shop))
    link = PaymentLink.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/paymentlink/{link.pk}/change/")
    payment = link.payment
    assert (payment.flow, payment.status, payment.amount, payment.currency) == ("HOSTED", "PENDING", 249_950, "INR")
    assert re.fullmatch(r"plink_[A-Za-z0-9]{14}", payment.merchant_txn_id)
    assert (payment.customer_phone, payment.description) == ("9876543210", "Invoice 1042: tailoring")
    assert timedelta(days=9, hours=23) < payment.expires_at - timezone.now() <= timedelta(days=10)
    page = console.get(response["Location"]).content.decode()
    address = re.search(r'data-link-url>(https://pay\.example\.in/pay/[A-Za-z0-9_-]+)<', page).group(1)
    assert address.endswith(link_token_of(link)) and "Cancel this link" in page
    record = AuditRecord.objects.get(action="payment_link.create")
    assert record.after["link"] == payment.merchant_txn_id and record.after["amount"] == 249_950
    assert link_token_of(link) not in str(record.after)  # the address is not in the audit log


def link_token_of(link: PaymentLink) -> str:
    from gateway.core import crypto

    return crypto.decrypt(link.token_encrypted)


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"customer_phone": "", "customer_email": ""}, "customer_phone", "phone or email"),
    ({"customer_phone": "98765"}, "customer_phone", "customer phone: a 10-digit mobile number"),
    ({"customer_phone": "+1 415 555 0100"}, "customer_phone", "not “+1 415 555 0100”"),
    ({"customer_phone": "98765 4321O"}, "customer_phone", "with or without +91"),
    ({"amount_rupees": "2,49"}, "amount_rupees", "amount (₹): write rupees as digits"),
    ({"valid_days": "31"}, "valid_days", "30"),
    ({"amount_rupees": "0.50"}, "amount_rupees", "1.00"),
    ({"amount_rupees": "1000000.01"}, "amount_rupees", "100000000 paise"),
    ({"description": "   "}, "description", "required"),
])
def test_a_bad_link_is_a_form_error_and_nothing_is_written(as_role, shop, changes, field, message):
    response = as_role("finance").post(ADD, link_form(shop, **changes))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors and message in " ".join(errors[field]), errors
    assert not PaymentLink.objects.exists() and not Payment.objects.exists()


@pytest.mark.parametrize("phone, amount", [
    ("+91 99887 76655", "2,499.50"), ("+919988776655", "₹2,499.50"), ("099887-76655", "2499.5"),
    ("(998) 877 6655", "2,499.50"),
])
def test_a_phone_with_91_and_spaces_and_an_amount_with_commas_are_taken_as_written(as_role, shop, phone, amount):
    # Issue 26: "+91 99887 76655" was refused ("at most 10 characters"), and so was "1,000".
    response = as_role("finance").post(ADD, link_form(shop, customer_phone=phone, amount_rupees=amount))
    assert response.status_code == 302, response.context["adminform"].form.errors
    payment = PaymentLink.objects.get().payment
    assert (payment.customer_phone, payment.amount) == ("9988776655", 249_950)


def test_a_link_no_offered_method_takes_is_refused_and_nothing_is_written(as_role, shop):
    shop.merchant.payment_methods = {code: {"enabled": False, "min": 100, "max": 100}
                                     for code in ("UPI", "CARD", "NB", "WALLET", "NEFT", "CHALLAN")}
    shop.merchant.save()  # RTGS only: from Rs 2 lakh
    response = as_role("finance").post(ADD, link_form(shop), follow=True)
    assert "Link not created: amount: no payment method" in response.content.decode()
    assert not PaymentLink.objects.exists() and not Payment.objects.exists()


@pytest.mark.parametrize("role", ["support", "administrators"])
def test_only_finance_creates_or_cancels_links_but_everyone_reads_them(as_role, shop, role):
    link = a_link(shop)
    console = as_role(role)
    assert console.post(ADD, link_form(shop)).status_code == 403
    assert PaymentLink.objects.count() == 1
    page = console.get(f"/admin/payments/paymentlink/{link.pk}/change/")
    assert page.status_code == 200 and "needs the finance role" in page.content.decode()
    assert console.post(f"/admin/payments/paymentlink/{link.pk}/cancel/").status_code == 403
    assert Payment.objects.get(pk=link.payment_id).status == "PENDING"


def test_finance_cancels_an_unpaid_link_through_the_transition_with_event_webhook_and_audit(as_role, shop):
    link = a_link(shop)
    response = as_role("finance").post(f"/admin/payments/paymentlink/{link.pk}/cancel/", follow=True)
    assert "cancelled" in response.content.decode()
    payment = Payment.objects.get(pk=link.payment_id)
    assert (payment.status, payment.failure_reason) == ("FAILED", "payment link cancelled")
    assert PaymentLink.objects.get(pk=link.pk).state == "cancelled"
    event = payment.events.get(kind=PaymentEvent.Kind.STATUS, to_status="FAILED")
    assert event.from_status == "PENDING" and event.detail["reason"] == "payment link cancelled"
    webhook = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id)
    assert webhook.event_type == "payment.failed"
    assert webhook.payload["merchant_txn_id"] == payment.merchant_txn_id  # the hosted payload
    assert webhook.payload["failure_reason"] == "payment link cancelled"
    assert AuditRecord.objects.get(action="payment_link.cancel").after == {"status": "FAILED"}


def test_a_link_being_paid_or_finished_cannot_be_cancelled(as_role, shop):
    link = a_link(shop)
    upi_pay(payment_id=link.payment_id, payer_vpa="timeout@sandbox")  # the customer is approving it
    console = as_role("finance")
    response = console.post(f"/admin/payments/paymentlink/{link.pk}/cancel/", follow=True)
    assert "Not cancelled" in response.content.decode()
    assert Payment.objects.get(pk=link.payment_id).status == "PROCESSING"
    assert not AuditRecord.objects.filter(action="payment_link.cancel").exists()
    assert not WebhookEvent.objects.exists()


def test_the_link_list_shows_each_links_state(as_role, shop):
    a_link(shop)
    page = as_role("support").get("/admin/payments/paymentlink/").content.decode()
    assert "plink_" in page and ">active<" in page


def test_the_audit_log_filters_by_the_link_actions(as_role, shop):
    a_link(shop)
    page = as_role("support").get("/admin/gateway/auditrecord/?action=payment_link.create").content.decode()
    assert "payment_link.create" in page and "?action=payment_link.cancel" in page


def test_the_payments_page_says_it_came_from_a_link_and_leads_to_it(as_role, shop):
    link = a_link(shop)
    page = as_role("support").get(f"/admin/payments/payment/{link.payment_id}/change/").content.decode()
    assert f'href="/admin/payments/paymentlink/{link.pk}/change/">active</a>' in page


# --- issue 29, finding 6 ----------------------------------------------------------------------------

@pytest.mark.parametrize("role", ["support", "administrators"])
def test_only_roles_that_may_send_a_link_see_its_address(as_role, shop, role):
    """Every role saw the link's full address, the customer's key to the payment; now only those
    who may send links (payments.add_paymentlink) do, on the link's page and on the payment's."""
    link = a_link(shop)
    token = link_token_of(link)
    console = as_role(role)
    for url in (f"/admin/payments/paymentlink/{link.pk}/change/", "/admin/payments/paymentlink/",
                f"/admin/payments/payment/{link.payment_id}/change/"):
        page = console.get(url).content.decode()
        assert token not in page, url
    assert "Shown only to staff who may send payment links" in console.get(
        f"/admin/payments/paymentlink/{link.pk}/change/").content.decode()
    assert token in as_role("finance").get(f"/admin/payments/paymentlink/{link.pk}/change/").content.decode()


def test_the_links_token_is_kept_only_as_its_hash_and_encrypted_never_in_the_payments_return_address(shop):
    link = a_link(shop)
    token = link_token_of(link)
    payment = Payment.objects.get(pk=link.payment_id)
    assert token not in payment.return_url
    assert payment.return_url.endswith(f"/pay/{payment.merchant_txn_id}")
    from django.db import connection

    with connection.cursor() as cursor:  # nowhere in the payment's row, in any column
        cursor.execute("SELECT * FROM payments_payment WHERE id = %s", [payment.pk])
        assert token not in str(cursor.fetchone())
    assert link.token_hash != token and token not in link.token_encrypted


def test_the_customer_comes_back_to_the_links_page_by_its_id_and_only_that_browser_sees_it(client, shop):
    link = a_link(shop)
    payment = link.payment
    assert client.get(f"/pay/{link_token_of(link)}").status_code == 303  # the customer opens it
    assert client.post(f"/checkout/{payment.payment_id}/cancel").status_code in (302, 303)
    back = client.get(f"/pay/{payment.merchant_txn_id}", HTTP_ACCEPT="text/html")
    assert back.status_code == 200
    from django.test import Client

    stranger = Client().get(f"/pay/{payment.merchant_txn_id}", HTTP_ACCEPT="text/html")
    assert stranger.status_code == 404


def test_a_customers_cancel_is_recorded_as_the_customers(client, shop):
    """The cancel on the customer's page left no audit record; it is now the customer's."""
    link = a_link(shop)
    payment = link.payment
    client.get(f"/pay/{link_token_of(link)}", REMOTE_ADDR="203.0.113.50")
    client.post(f"/checkout/{payment.payment_id}/cancel", REMOTE_ADDR="203.0.113.50")
    payment.refresh_from_db()
    assert (payment.status, payment.failure_reason) == ("FAILED", "cancelled by the customer")
    assert PaymentLink.objects.get(pk=link.pk).state == "failed"  # not the console's "cancelled"
    record = AuditRecord.objects.get(action="payment_link.customer_cancel")
    assert record.actor is None and record.actor_name == "customer"
    assert record.after == {"status": "FAILED", "by": "customer", "address": "203.0.113.50",
                            "page": "customer checkout"}
    assert not AuditRecord.objects.filter(action="payment_link.cancel").exists()


@pytest.mark.parametrize("role", ["support", "administrators"])
def test_staff_who_may_not_cancel_cannot_cancel_through_the_customers_page(as_role, shop, role):
    link = a_link(shop)
    payment = link.payment
    console = as_role(role)  # a browser signed in to the console
    console.get(f"/pay/{link_token_of(link)}")
    refused = console.post(f"/checkout/{payment.payment_id}/cancel", HTTP_ACCEPT="text/html")
    assert refused.status_code == 403
    assert Payment.objects.get(pk=payment.pk).status == "PENDING"
    assert not AuditRecord.objects.filter(action__startswith="payment_link.").exclude(
        action="payment_link.create").exists()


def test_finance_cancelling_on_the_customers_page_is_recorded_by_name(as_role, shop):
    from django.contrib.auth.models import User

    link = a_link(shop)
    console = as_role("finance")
    console.get(f"/pay/{link_token_of(link)}")
    console.post(f"/checkout/{link.payment.payment_id}/cancel")
    record = AuditRecord.objects.get(action="payment_link.customer_cancel")
    assert record.actor == User.objects.get(groups__name="finance") and record.after["by"] == record.actor_name


def test_the_migration_takes_the_token_out_of_existing_links_return_addresses(shop):
    import importlib

    from django.apps import apps

    link = a_link(shop)
    token = link_token_of(link)
    Payment.objects.filter(pk=link.payment_id).update(return_url=f"https://pay.example.in/pay/{token}")
    importlib.import_module("payments.migrations.0018_payment_link_return_url_without_token").forwards(apps, None)
    payment = Payment.objects.get(pk=link.payment_id)
    assert payment.return_url == f"https://pay.example.in/pay/{payment.merchant_txn_id}"
