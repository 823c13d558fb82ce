"""One search box finds a payment by any of its identifiers, with exact lookups on indexes;
the list filters by merchant, status, method, flow and IST day."""
from __future__ import annotations

import itertools
import json
import re
from datetime import timedelta

import pytest
from django.db import connection
from psycopg import sql as psycopg_sql
from django.utils import timezone

from gateway.console.kit.days import today
from gateway.console.search import payment_search
from payments.models import Payment
from refunds.models import Refund
from tests.support.factories import make_merchant, make_payment, story_payment
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

LIST = "/admin/payments/payment/"


@pytest.fixture
def support(as_role):
    return as_role("support")


@pytest.fixture
def target(shop, receiver, admin_user):
    """The payment to find, among others of other merchants and customers."""
    other = make_merchant(code="OTHERSHOP")
    for index in range(3):
        make_payment(other, customer_phone=f"91234567{index:02d}")
    payment = story_payment(shop, refund_by=admin_user, receiver=receiver)
    Payment.objects.filter(pk=payment.pk).update(transfer_reference="NEFTSBX7QK2")
    return Payment.objects.get(pk=payment.pk)


def identifiers(payment: Payment) -> dict[str, str]:
    refund = Refund.objects.get(payment=payment)
    event = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id)
    return {
        "sabpaisaTxnId": payment.sabpaisa_txn_id,
        "sabpaisaTxnId typed in lower case": payment.sabpaisa_txn_id.lower(),
        "paymentId": payment.payment_id,
        "merchantTxnId": payment.merchant_txn_id,
        "bank reference (RRN)": payment.bank_rrn,
        "transfer reference": "NEFTSBX7QK2",
        "customer email, another case": "asha.rao@example.COM",
        "customer phone, 10 digits": "9876543210",
        "customer phone, +91 and spaces": "+91 98765 43210",
        "customer phone, 91 prefix": "919876543210",
        "customer phone, 0 prefix and hyphens": "098765-43210",
        "refund bank reference": refund.bank_refund_reference,
        "webhook event id": event.id,
        "with spaces around it": f"  {payment.sabpaisa_txn_id} ",
    }


IDENTIFIER_NAMES = ["sabpaisaTxnId", "sabpaisaTxnId typed in lower case", "paymentId", "merchantTxnId",
                    "bank reference (RRN)", "transfer reference", "customer email, another case",
                    "customer phone, 10 digits", "customer phone, +91 and spaces", "customer phone, 91 prefix",
                    "customer phone, 0 prefix and hyphens", "refund bank reference", "webhook event id",
                    "with spaces around it"]


@pytest.mark.parametrize("name", IDENTIFIER_NAMES)
def test_the_search_box_opens_the_payment_from_any_one_identifier(support, target, name):
    term = identifiers(target)[name]
    response = support.get(LIST, {"q": term})
    assert response.status_code == 302, f"{name}: {term!r} did not find exactly one payment"
    assert response["Location"] == f"/admin/payments/payment/{target.pk}/change/"
    page = support.get(response["Location"])
    assert f"Found {target.sabpaisa_txn_id} by its" in page.content.decode()


def test_the_found_message_says_which_identifier_matched(support, target):
    page = support.get(LIST, {"q": "+91 98765 43210"}, follow=True)
    assert f"Found {target.sabpaisa_txn_id} by its customer phone" in page.content.decode()
    page = support.get(LIST, {"q": target.bank_rrn}, follow=True)
    assert "by its bank reference (RRN)" in page.content.decode()


def test_a_customer_with_several_payments_gets_the_list_of_them(support, shop, target):
    again = make_payment(shop, customer_phone="+91-98765-43210")
    response = support.get(LIST, {"q": "9876543210"})
    assert response.status_code == 200
    html = response.content.decode()
    assert target.sabpaisa_txn_id in html and again.sabpaisa_txn_id in html
    assert "Looked up “9876543210” as:" in html and "customer phone" in html
    assert html.count('class="field-sabpaisa_txn_id"') == 2


def test_a_part_of_an_identifier_finds_nothing_and_says_so(support, target):
    response = support.get(LIST, {"q": target.sabpaisa_txn_id[:10]})
    assert response.status_code == 200
    assert "No payment matches" in response.content.decode()


def test_every_identifier_is_looked_up_through_an_index(target):
    """With sequential scans forbidden, PostgreSQL still answers every search: each lookup has
    an index (a search that needed a scan would show 'Seq Scan on payments_payment')."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    for name, term in identifiers(target).items():
        queryset, _ = payment_search(Payment.objects.all(), term)
        plan = queryset.explain()
        assert "Seq Scan on payments_payment" not in plan, f"{name}:\n{plan}"
        assert "Seq Scan on refunds_refund" not in plan, f"{name}:\n{plan}"
        assert list(queryset) == [target], name


def test_every_identifier_is_looked_up_through_an_index_by_a_generic_plan_too(target):
    """What a prepared statement runs once PostgreSQL plans it generically (after five runs on a
    connection, when the generic plan looks cheaper), with the parameters unknown: each
    identifier's lookup still has its index. A search once read all 5 million payments this way
    (2.8 s): the phone key's constants travelled as parameters, so the generic plan's expression
    was not the index's, and the transfer reference (empty on nearly every payment) was looked
    up in the same statement, where only a known, non-empty value can use its partial index."""
    for name, term in identifiers(target).items():
        queryset, _ = payment_search(Payment.objects.all(), term)
        sql, params = queryset[:100].query.sql_with_params()
        numbered = itertools.count(1)
        prepared = re.sub(r"%s", lambda _: f"${next(numbered)}", sql)  # as server-side binding sends it
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            types = ["bigint" if isinstance(value, int) else "text" for value in params]
            cursor.execute(f"PREPARE identifier_search ({', '.join(types)}) AS {prepared}")
            try:
                # EXPLAIN EXECUTE takes no parameters of its own: the values go in as literals.
                values = psycopg_sql.SQL(", ").join(psycopg_sql.Literal(value) for value in params)
                cursor.execute(psycopg_sql.SQL("EXPLAIN EXECUTE identifier_search({})").format(values)
                               .as_string(connection.connection))
                plan = "\n".join(row[0] for row in cursor.fetchall())
            finally:
                cursor.execute("DEALLOCATE identifier_search")
        assert "Seq Scan on payments_payment" not in plan, f"{name}:\n{plan}"


def whole_table_reads(node: dict) -> list[str]:
    """The tables a plan reads whole: a scan of a table with no index condition (with
    sequential scans off, PostgreSQL reads a whole table through an index instead)."""
    found = []
    if "Relation Name" in node and "Index Cond" not in node and node["Node Type"] != "Bitmap Heap Scan":
        found.append(f"{node['Node Type']} on {node['Relation Name']}")
    for child in node.get("Plans", []):
        found.extend(whole_table_reads(child))
    return found


def admin_search_through_indexes(model, term: str) -> list:
    """What the console list of `model` finds for `term` (its admin's get_search_results), after
    checking that the query, with sequential scans forbidden, reads no whole table."""
    from django.contrib.admin.sites import site
    from django.test import RequestFactory

    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    queryset, _ = site._registry[model].get_search_results(RequestFactory().get("/"), model.objects.all(), term)
    plan = queryset.explain(format="json")
    assert whole_table_reads(json.loads(plan)[0]["Plan"]) == [], f"{term!r}:\n{plan}"
    return list(queryset)


def test_the_refund_search_finds_a_refund_by_each_identifier_through_indexes(target):
    """The refunds list's search (refunds/admin.py): every identifier it takes finds the
    refund, and with sequential scans forbidden the plan still reads no whole table."""
    refund = Refund.objects.filter(payment=target).first()
    Refund.objects.filter(pk=refund.pk).update(bank_refund_reference="SBXREF77")
    terms = {"refundId": refund.refund_id, "bank reference": "SBXREF77", "sabpaisaTxnId": target.sabpaisa_txn_id,
             "merchantTxnId": target.merchant_txn_id, "merchant code": target.merchant.code}
    for name, term in terms.items():
        assert refund in admin_search_through_indexes(Refund, f" {term} "), name
    assert admin_search_through_indexes(Refund, refund.refund_id[:8]) == []


# --- filters --------------------------------------------------------------------------------

def listed(client, **params) -> str:
    response = client.get(LIST, params)
    assert response.status_code == 200
    return response.content.decode()


def test_filters_by_merchant_status_method_and_flow(support, shop):
    other = make_merchant(code="ELSEWHERE")
    card = make_payment(shop, payment_mode=Payment.Mode.CARD, card_last4="4242")
    failed = make_payment(shop, status=Payment.Status.FAILED)
    theirs = make_payment(other)
    html = listed(support, merchant__id__exact=other.merchant.pk)
    assert theirs.sabpaisa_txn_id in html and card.sabpaisa_txn_id not in html
    html = listed(support, status__exact="FAILED")
    assert failed.sabpaisa_txn_id in html and card.sabpaisa_txn_id not in html
    html = listed(support, method="CARD")
    assert card.sabpaisa_txn_id in html and failed.sabpaisa_txn_id not in html
    html = listed(support, flow__exact="S2S")
    assert card.sabpaisa_txn_id not in html


def test_the_day_filter_uses_india_calendar_days(support, shop):
    late_yesterday, early_today = make_payment(shop), make_payment(shop)
    day = today()
    start = timezone.datetime.combine(day, timezone.datetime.min.time(), tzinfo=timezone.get_default_timezone())
    Payment.objects.filter(pk=late_yesterday.pk).update(created_at=start - timedelta(seconds=1))
    Payment.objects.filter(pk=early_today.pk).update(created_at=start)
    html = listed(support, created_at_from=day.isoformat(), created_at_to=day.isoformat())
    assert early_today.sabpaisa_txn_id in html and late_yesterday.sabpaisa_txn_id not in html
    yesterday = (day - timedelta(days=1)).isoformat()
    html = listed(support, created_at_from=yesterday, created_at_to=yesterday)
    assert late_yesterday.sabpaisa_txn_id in html and early_today.sabpaisa_txn_id not in html


def test_a_bad_day_is_refused_without_an_error_page(support, shop):
    response = support.get(LIST, {"created_at_from": "yesterday"})
    assert response.status_code == 302 and "e=1" in response["Location"]


def test_the_index_page_has_the_search_box_first(support, target):
    html = support.get("/admin/").content.decode()
    assert html.index('id="find-payment"') < html.index('id="content-main"')
    assert 'action="/admin/payments/payment/"' in html and 'name="q"' in html
