"""Every hot statement finds its rows through an index, on a database with some history.

On an empty database PostgreSQL reads whole tables because they are small, and every plan
looks fine; the statements that read whole tables only show at millions of rows, as the
needs-attention queue did (a sequential scan of every webhook delivery and every refund,
issue 30). So this test fills a moderate history with the big-data benchmark's own fill
(benchmarks/bigdata.py: 60,000 payments over 18 months and 600 merchants, the merchant under
test holding about 4% of it, as the largest of a thousand does at 5 million), runs each hot
path of the merchant API, the sweeps and the support console as the product runs it, and asks
PostgreSQL for the plan of every statement it sent (EXPLAIN, FORMAT JSON): none may read a
large table from end to end. A behaviour test, not a timed one: the figures are in
docs/performance.md and benchmarks/RESULTS.md."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from benchmarks.bigdata import Size, fill
from gateway.console.attention import attention_sections
from gateway.console.dashboard import dashboard_context
from gateway.console.search import payment_search
from payments import writes as payment_writes
from payments.models import Payment
from payments.services.expiry import payments_expire_due
from refunds import selectors as refund_selectors
from refunds.models import Refund
from tests.support.factories import make_merchant
from webhooks.delivery import deliveries_due_process
from webhooks.models import WebhookEvent
from webhooks.retention import webhook_history_delete_old

LARGE_TABLES = {"payments_payment", "payments_paymentevent", "refunds_refund", "refunds_refundevent",
                "webhooks_webhookevent", "webhooks_webhookdelivery", "webhooks_webhookdeliveryattempt"}

pytestmark = pytest.mark.django_db


def _sequential_scans(node: dict) -> list[str]:
    found = [node["Relation Name"]] if node.get("Node Type") == "Seq Scan" and node.get(
        "Relation Name") in LARGE_TABLES else []
    for child in node.get("Plans", []):
        found += _sequential_scans(child)
    return found


def _plans_of(run) -> list[tuple[str, list[str]]]:
    """(statement, large tables it reads sequentially) for every statement `run` sends."""
    with CaptureQueriesContext(connection) as sent:
        run()
    out = []
    for query in sent.captured_queries:
        statement = query["sql"]
        if not statement.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE", "WITH")):
            continue
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (FORMAT JSON) " + statement)
            plan = cursor.fetchone()[0]
        plan = json.loads(plan) if isinstance(plan, str) else plan
        out.append((statement, _sequential_scans(plan[0]["Plan"])))
    return out


@pytest.fixture(scope="module")
def grown(django_db_setup, django_db_blocker):
    """One moderate fill for every case of the module, removed at the end."""
    with django_db_blocker.unblock():
        from django.db import transaction

        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            merchant = make_merchant(code="BENCH").merchant
            fill(Size(60_000, merchants=600), merchant_code="BENCH", vacuum=False)
            with connection.cursor() as cursor:  # the fill's SET LOCAL would last the whole module
                cursor.execute("SET LOCAL session_replication_role = origin")
            yield merchant
        finally:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


def _hot_paths(merchant):
    now = timezone.now()
    mine = Payment.objects.filter(merchant=merchant)
    paid = mine.filter(status="SUCCESS").exclude(bank_rrn="").order_by("-created_at")[20]
    old = mine.filter(created_at__lt=now - timedelta(days=365)).order_by("-created_at").first()
    refund = Refund.objects.filter(merchant=merchant, status="SUCCESS").order_by("-created_at")[5]
    event = WebhookEvent.objects.filter(merchant=merchant, event_type__startswith="payment.").order_by(
        "-created_at")[5]
    year_ago = (now - timedelta(days=365)).date()
    paths = {
        "enquiry of a year-old payment": lambda: payment_writes.payment_get_by_merchant_txn_id(
            merchant=merchant, merchant_txn_id=old.merchant_txn_id),
        "refund list, first page": lambda: refund_selectors.refunds_page_for_merchant(merchant=merchant),
        "refund list, a month a year ago": lambda: refund_selectors.refunds_page_for_merchant(
            merchant=merchant, from_day=year_ago - timedelta(days=30), to_day=year_ago),
        "refund list, one status": lambda: refund_selectors.refunds_page_for_merchant(merchant=merchant,
                                                                                      status="FAILED"),
        "refund list of a payment": lambda: refund_selectors.refunds_page_for_merchant(merchant=merchant,
                                                                                       payment=refund.payment),
        "refund by id": lambda: refund_selectors.refund_get_for_merchant(merchant=merchant,
                                                                         refund_id=refund.refund_id),
        "the payment a refund names": lambda: refund_selectors.payment_get_for_merchant(
            merchant=merchant, sabpaisa_txn_id=paid.sabpaisa_txn_id),
        "expiry sweep": payments_expire_due,
        "delivery sweep": deliveries_due_process,
        "retention sweep": webhook_history_delete_old,
        "console dashboard": dashboard_context,
        "console needs-attention queue": lambda: [section.rows for section in attention_sections()],
    }
    terms = {"sabpaisaTxnId": paid.sabpaisa_txn_id, "paymentId": paid.payment_id,
             "merchantTxnId": paid.merchant_txn_id, "bank RRN": paid.bank_rrn, "email": paid.customer_email,
             "phone": paid.customer_phone, "refund bank reference": refund.bank_refund_reference,
             "webhook event id": event.id}
    for name, term in terms.items():
        paths[f"console search by {name}"] = lambda term=term: list(payment_search(Payment.objects.all(), term)[0][:100])
    return paths


@pytest.mark.parametrize("path", [
    "enquiry of a year-old payment", "refund list, first page", "refund list, a month a year ago",
    "refund list, one status", "refund list of a payment", "refund by id", "the payment a refund names",
    "expiry sweep", "delivery sweep", "retention sweep", "console dashboard", "console needs-attention queue",
    *(f"console search by {name}" for name in ("sabpaisaTxnId", "paymentId", "merchantTxnId", "bank RRN", "email",
                                               "phone", "refund bank reference", "webhook event id")),
])
def test_no_hot_statement_reads_a_large_table_end_to_end(grown, path):
    plans = _plans_of(_hot_paths(grown)[path])
    assert plans, f"{path} sent no statement"
    scans = [(statement[:200], tables) for statement, tables in plans if tables]
    assert not scans, f"{path} reads whole tables: {scans}"
