"""Finance staff start refunds from the admin console through the refund service; the console
never edits a refund, and staff without refunds.initiate_refund are refused."""
import re

import pytest
from django.contrib.auth.models import Permission, User

from gateway.platform.models import AuditRecord
from payments.models import Payment
from refunds.models import Refund
from refunds.tasks import refund_process
from tests.support.factories import make_payment, make_refund, make_success_payment

pytestmark = pytest.mark.django_db


def _staff(username, *codenames):
    user = User.objects.create_user(username, password="pw-not-used", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="refunds", codename__in=codenames))
    return user


@pytest.fixture
def finance(client):
    client.force_login(_staff("finance", "initiate_refund", "view_refund"))
    return client


def _url(payment):
    return f"/admin/refunds/refund/initiate/{payment.pk}/"


def _form_refund_id(page) -> str:
    return re.search(rb'name="refund_id" value="([^"]+)"', page.content).group(1).decode()


def test_initiate_page_shows_the_remaining_amount_in_rupees_and_fills_in_no_amount(finance, merchant):
    # Issue 20: a default of the whole amount was refunded by accident; amounts read in rupees.
    payment = make_success_payment(merchant, amount=10_000)
    make_refund(payment, amount=2_500)
    page = finance.get(_url(payment))
    assert page.status_code == 200
    content = page.content.decode()
    assert "₹75.00 (7500 paise)" in content
    assert 'name="amount"' in content and not re.search(r'name="amount"[^>]* value=', content)
    assert payment.sabpaisa_txn_id in content


def test_typing_100_refunds_100_rupees_after_a_confirmation_that_states_it(finance, merchant):
    payment = make_success_payment(merchant, amount=50_000)
    form = {"amount": "100", "reason": "one item returned", "refund_id": _form_refund_id(finance.get(_url(payment)))}
    asked = finance.post(_url(payment), form)
    assert asked.status_code == 200 and not Refund.objects.exists()
    question = re.search(r'<p id="confirm-amount"[^>]*>(.*?)</p>', asked.content.decode(), re.S).group(1)
    assert "₹100.00 (10000 paise)" in question
    assert 'value="Yes, refund ₹100.00"' in asked.content.decode()
    done = finance.post(_url(payment), {**form, "confirmed": "True"})
    assert done.status_code == 302
    assert Refund.objects.get().amount == 10_000


def test_changing_the_amount_from_the_confirmation_goes_back_to_the_form(finance, merchant):
    payment = make_success_payment(merchant, amount=50_000)
    form = {"amount": "100", "reason": "x", "refund_id": _form_refund_id(finance.get(_url(payment))),
            "confirmed": "True", "change": "Change the amount"}
    page = finance.post(_url(payment), form)
    assert page.status_code == 200 and not Refund.objects.exists()
    assert 'id="refund-confirm"' not in page.content.decode()
    assert re.search(r'name="amount"[^>]* value="100"', page.content.decode())


@pytest.mark.parametrize("amount, message", [
    ("99.505", "Amount (₹): write rupees as digits"),
    ("0", "Ensure this value is greater than or equal to 0.01."),
    ("ten", "Amount (₹): write rupees as digits"),
    ("1,0000", "not “1,0000”"),
    ("1.000,50", "Amount (₹): write rupees as digits"),
    ("1,50", "at most two decimals after a point (1,000.50)"),
], ids=["fraction-of-a-paisa", "zero", "not-a-number", "misplaced-comma", "decimal-comma", "comma-for-a-point"])
def test_an_amount_that_is_not_rupees_and_paise_is_refused_on_the_form(finance, merchant, amount, message):
    payment = make_success_payment(merchant, amount=50_000)
    form = {"amount": amount, "reason": "x", "refund_id": _form_refund_id(finance.get(_url(payment))),
            "confirmed": "True"}
    page = finance.post(_url(payment), form)
    assert page.status_code == 200 and message in page.content.decode()
    assert not Refund.objects.exists()


@pytest.mark.parametrize("typed, paise", [
    ("1,000", 100_000), ("1,000.50", 100_050), ("1,00,000", 10_000_000), ("₹1,50,000.25", 15_000_025),
])
def test_an_amount_written_with_indian_grouping_is_refunded_as_written(finance, merchant, typed, paise):
    # Issue 26: "1,000" in the refund amount was refused with "Enter a number."
    payment = make_success_payment(merchant, amount=20_000_000, payment_mode="NB", bank_code="HDFC")
    form = {"amount": typed, "reason": "returned", "refund_id": _form_refund_id(finance.get(_url(payment)))}
    asked = finance.post(_url(payment), form)
    assert f"({paise} paise)" in re.search(r'<p id="confirm-amount"[^>]*>(.*?)</p>', asked.content.decode(), re.S).group(1)
    assert finance.post(_url(payment), {**form, "confirmed": "True"}).status_code == 302
    assert Refund.objects.get().amount == paise


def test_staff_starts_a_partial_refund_through_the_service_and_it_is_audited(finance, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    page = finance.get(_url(payment))
    response = finance.post(_url(payment), {"amount": "40", "reason": "goodwill",
                                            "refund_id": _form_refund_id(page), "confirmed": "True"})
    assert response.status_code == 302, response.content[:2000]
    refund = Refund.objects.get()
    assert response["Location"] == f"/admin/refunds/refund/{refund.pk}/change/"
    assert (refund.amount, refund.status, refund.reason, refund.source) == (4_000, "INITIATED", "goodwill", "ADMIN")
    assert refund.initiated_by.username == "finance"
    assert refund.events.get().actor_name == "finance"
    audit = AuditRecord.objects.get(action="refund.initiate")
    assert audit.actor_name == "finance" and audit.object_id == str(refund.pk)
    assert audit.merchant == payment.merchant
    assert audit.after["refundAmount"] == 4_000 and audit.after["refundableBefore"] == 10_000


def test_staff_starts_a_full_refund(finance, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    page = finance.get(_url(payment))
    finance.post(_url(payment), {"amount": "100", "reason": "order cancelled", "refund_id": _form_refund_id(page), "confirmed": "True"})
    assert Refund.objects.get().amount == 10_000
    assert b"cannot be refunded" in finance.get(_url(payment)).content


def test_submitting_the_same_form_twice_refunds_once(finance, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    form = {"amount": "30", "reason": "double click", "refund_id": _form_refund_id(finance.get(_url(payment))),
            "confirmed": "True"}
    first = finance.post(_url(payment), form)
    second = finance.post(_url(payment), form)
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert Refund.objects.count() == 1


def test_too_large_an_amount_is_refused_and_the_attempt_audited(finance, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    page = finance.get(_url(payment))
    response = finance.post(_url(payment), {"amount": "100.01", "reason": "x", "refund_id": _form_refund_id(page),
                                            "confirmed": "True"})
    assert response.status_code == 200
    assert b"REFUND_AMOUNT_EXCEEDED" in response.content
    assert not Refund.objects.exists()
    refused = AuditRecord.objects.get(action="refund.initiate_refused")
    assert refused.after["errorCode"] == "REFUND_AMOUNT_EXCEEDED" and refused.actor_name == "finance"


def test_payment_that_is_not_success_cannot_be_refunded_from_the_console(finance, merchant):
    payment = make_payment(merchant, status=Payment.Status.FAILED)
    page = finance.get(_url(payment))
    assert b"only a SUCCESS payment can be refunded" in page.content
    response = finance.post(_url(payment), {"amount": "1", "reason": "x", "refund_id": "rfnd_abc", "confirmed": "True"})
    assert b"REFUND_NOT_ALLOWED" in response.content
    assert not Refund.objects.exists()


def test_staff_without_the_permission_get_403(client, merchant):
    client.force_login(_staff("support", "view_refund"))
    payment = make_success_payment(merchant)
    page = client.get(_url(payment))
    assert page.status_code == 403
    assert b"refunds.initiate_refund" in page.content
    response = client.post(_url(payment), {"amount": "1", "reason": "x", "refund_id": "rfnd_abc", "confirmed": "True"})
    assert response.status_code == 403
    assert not Refund.objects.exists()
    assert not AuditRecord.objects.filter(action__startswith="refund.").exists()


def test_people_who_are_not_staff_are_sent_to_the_login_page(client, merchant):
    payment = make_success_payment(merchant)
    response = client.get(_url(payment))
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_refund_page_is_read_only_with_its_timeline(finance, merchant):
    payment = make_success_payment(merchant, payment_mode=Payment.Mode.CARD, card_last4="4242")
    page = finance.get(_url(payment))
    finance.post(_url(payment), {"amount": "5", "reason": "timeline", "refund_id": _form_refund_id(page),
                                  "confirmed": "True"})
    refund = Refund.objects.get()
    refund_process(refund.pk)
    page = finance.get(f"/admin/refunds/refund/{refund.pk}/change/")
    assert page.status_code == 200
    content = page.content.decode()
    assert "original card ****4242" in content
    assert "SUCCESS" in content and "submitted" in content
    assert 'name="_save"' not in content and 'name="amount"' not in content  # nothing to edit
    assert "Refund more of this payment" in content
    listing = finance.get("/admin/refunds/refund/")
    assert listing.status_code == 200 and refund.refund_id in listing.content.decode()


def test_staff_cannot_edit_or_delete_a_refund(finance, merchant):
    payment = make_success_payment(merchant)
    refund = make_refund(payment, amount=500)
    # Refused by Django's admin (PermissionDenied, answered by the project's handler403).
    response = finance.post(f"/admin/refunds/refund/{refund.pk}/change/", {"status": "SUCCESS"})
    assert response.status_code in (401, 403)
    assert finance.post(f"/admin/refunds/refund/{refund.pk}/delete/", {"post": "yes"}).status_code in (401, 403)
    assert finance.get("/admin/refunds/refund/add/").status_code in (401, 403)
    refund.refresh_from_db()
    assert refund.status == "INITIATED"


def test_the_refund_page_shows_a_payments_refunds_a_page_at_a_time(finance, merchant):
    """Issue 29, finding 10: the page loaded every refund of the payment to show the form; it now
    pages them as the API does (20 a page, oldest first), with the count and links between pages."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    payment = make_success_payment(merchant, amount=1_000_000)
    for index in range(45):
        make_refund(payment, amount=100 + index, refund_id=f"many-{index:03d}")
    with CaptureQueriesContext(connection) as queries:
        first = finance.get(_url(payment)).content.decode()
    assert "Refunds of this payment (45)" in first and "Page 1 of 3" in first
    listed = re.findall(r">(many-\d{3})<", first)
    assert listed == [f"many-{index:03d}" for index in range(20)]
    assert '?page=1" rel="next"' in first and 'rel="prev"' not in first
    # No query reads more than a page of refunds.
    refund_reads = [q["sql"] for q in queries.captured_queries
                    if 'FROM "refunds_refund"' in q["sql"] and "SELECT" in q["sql"] and "LIMIT" not in q["sql"]
                    and "COUNT(" not in q["sql"] and "SUM(" not in q["sql"]]
    assert refund_reads == []
    last = finance.get(_url(payment) + "?page=2").content.decode()
    assert re.findall(r">(many-\d{3})<", last) == [f"many-{index:03d}" for index in range(40, 45)]
    assert "Page 3 of 3" in last and '?page=1" rel="prev"' in last and 'rel="next"' not in last
    assert finance.get(_url(payment) + "?page=x").status_code == 200
