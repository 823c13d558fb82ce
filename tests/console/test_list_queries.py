"""List and search pages issue a fixed, small number of queries however many rows there are,
and never COUNT(*) a whole table: every count is over a LIMIT subquery."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from payments.models import Payment
from tests.support.factories import make_merchant, make_payment, make_refund

pytestmark = pytest.mark.django_db

PAGES = [
    "/admin/payments/payment/",
    "/admin/payments/payment/?q=9876543210",
    "/admin/payments/payment/?q=someone@example.com",
    "/admin/payments/payment/?status__exact=SUCCESS&method=UPI",
    "/admin/payments/payment/?created_at_from=2020-01-01",
    "/admin/refunds/refund/",
    "/admin/refunds/refund/?q=rfnd_nothing",
    "/admin/webhooks/webhookdelivery/",
    "/admin/webhooks/webhookevent/",
    "/admin/gateway/auditrecord/",
    "/admin/tokens/token/",
]
MAX_QUERIES = 12


def make_rows(merchants, count: int) -> None:
    """`count` successful payments spread over `merchants`, a fifth of them refunded, each with
    its webhook; half of them with the same customer phone, so the phone search lists many."""
    for index in range(count):
        payment = make_payment(merchants[index % len(merchants)], customer_phone="9876543210" if index % 2 else "",
                               customer_email="someone@example.com" if index % 3 == 0 else "")
        if index % 5 == 0:
            make_refund(payment, amount=100)


def queries_for(client, url) -> CaptureQueriesContext:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return captured


@pytest.fixture
def merchants(db):
    return [make_merchant(code=f"LIST{index}", webhook_url="https://merchant.example/hook") for index in range(5)]


@pytest.mark.parametrize("url", PAGES)
def test_a_list_page_costs_the_same_few_queries_for_5_rows_and_for_50(as_role, merchants, url,
                                                                        django_assert_max_num_queries):
    client = as_role("support")
    make_rows(merchants, 5)
    client.get(url)  # the session and the content types are cached from here on
    few = queries_for(client, url)
    make_rows(merchants, 45)
    assert Payment.objects.count() == 50
    with django_assert_max_num_queries(MAX_QUERIES):
        many = queries_for(client, url)
    assert len(many) == len(few), [q["sql"][:150] for q in many.captured_queries]


@pytest.mark.parametrize("url", PAGES)
def test_no_list_page_counts_a_whole_table(as_role, merchants, url):
    client = as_role("support")
    make_rows(merchants, 5)
    for query in queries_for(client, url).captured_queries:
        sql = query["sql"]
        if "COUNT(" in sql and "django_session" not in sql:
            assert "LIMIT" in sql, sql


def test_a_long_list_says_more_than_instead_of_counting(as_role, merchants, monkeypatch):
    from django.contrib.admin import site

    client = as_role("support")
    make_rows(merchants, 12)
    payments_admin = site._registry[Payment]
    monkeypatch.setattr(payments_admin, "list_per_page", 2)
    monkeypatch.setattr(payments_admin, "list_max_show_all", 2)
    # Counted up to 10 pages past the one shown: 12 rows are under that cap, and exact.
    assert "12 payments" in client.get("/admin/payments/payment/").content.decode()
    monkeypatch.setattr(payments_admin, "list_per_page", 1)
    monkeypatch.setattr(payments_admin, "list_max_show_all", 1)
    # One per page: the count stops at 11 pages' worth and the list says so.
    html = client.get("/admin/payments/payment/").content.decode()
    assert "more than 11 payments" in html
    assert client.get("/admin/payments/payment/?p=12").status_code == 200  # and the pages go on
