"""The hot paths of the gateway, as the product runs them, and the statements each sends:
what tests/benchmarks/test_hot_plans.py plans on a moderate fill (no sequential scan of a
large table) and what `python -m benchmarks.hotpaths` explains on a grown database for
docs/performance.md (EXPLAIN (ANALYZE, BUFFERS) of every statement)."""
from __future__ import annotations

import json
import sys
from datetime import timedelta

LARGE_TABLES = {"payments_payment", "payments_paymentevent", "refunds_refund", "refunds_refundevent",
                "webhooks_webhookevent", "webhooks_webhookdelivery", "webhooks_webhookdeliveryattempt"}
SEARCH_TERMS = ("sabpaisaTxnId", "paymentId", "merchantTxnId", "bank RRN", "email", "phone",
                "refund bank reference", "webhook event id")
NAMES = ("enquiry of a year-old payment", "refund list, first page", "refund list, a month a year ago",
         "refund list, one status", "refund list of a payment", "refund by id", "the payment a refund names",
         "expiry sweep", "delivery sweep", "retention sweep", "console dashboard", "console needs-attention queue",
         *(f"console search by {name}" for name in SEARCH_TERMS))


def hot_paths(merchant) -> dict:
    """name -> a call that runs that path for `merchant` (which has a history)."""
    from django.utils import timezone

    from gateway.console.attention import attention_sections
    from gateway.console.dashboard import dashboard_context
    from gateway.console.search import payment_search
    from payments import writes as payment_writes
    from payments.models import Payment
    from payments.services.expiry import payments_expire_due
    from refunds import selectors as refund_selectors
    from refunds.models import Refund
    from webhooks.delivery import deliveries_due_process
    from webhooks.models import WebhookEvent
    from webhooks.retention import webhook_history_delete_old

    now = timezone.now()
    mine = Payment.objects.filter(merchant=merchant)
    paid = mine.filter(status="SUCCESS").exclude(bank_rrn="").order_by("-created_at")[20]
    old = mine.filter(created_at__lt=now - timedelta(days=365)).order_by("-created_at").first()
    refund = Refund.objects.filter(merchant=merchant, status="SUCCESS").order_by("-created_at")[5]
    event = WebhookEvent.objects.filter(merchant=merchant, event_type__startswith="payment.").order_by(
        "-created_at")[5]
    year_ago = (now - timedelta(days=365)).date()
    pages = refund_selectors.refunds_page_for_merchant
    paths = {
        "enquiry of a year-old payment": lambda: payment_writes.payment_get_by_merchant_txn_id(
            merchant=merchant, merchant_txn_id=old.merchant_txn_id),
        "refund list, first page": lambda: pages(merchant=merchant),
        "refund list, a month a year ago": lambda: pages(merchant=merchant, from_day=year_ago - timedelta(days=30),
                                                         to_day=year_ago),
        "refund list, one status": lambda: pages(merchant=merchant, status="FAILED"),
        "refund list of a payment": lambda: pages(merchant=merchant, payment=refund.payment),
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
    terms = dict(zip(SEARCH_TERMS, (paid.sabpaisa_txn_id, paid.payment_id, paid.merchant_txn_id, paid.bank_rrn,
                                    paid.customer_email, paid.customer_phone, refund.bank_refund_reference, event.id)))
    for name, term in terms.items():
        paths[f"console search by {name}"] = lambda term=term: list(payment_search(Payment.objects.all(), term)[0][:100])
    return paths


def statements_of(run) -> list[str]:
    """The reading statements (SELECT, UPDATE, DELETE) `run` sends, in order."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as sent:
        run()
    return [q["sql"] for q in sent.captured_queries
            if q["sql"].lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE", "WITH"))]


def sequential_scans(node: dict) -> list[str]:
    """The large tables a plan (EXPLAIN FORMAT JSON's "Plan") reads from end to end."""
    found = [node["Relation Name"]] if node.get("Node Type") == "Seq Scan" and node.get(
        "Relation Name") in LARGE_TABLES else []
    for child in node.get("Plans", []):
        found += sequential_scans(child)
    return found


def unbounded_subplan_scans(node: dict, *, correlated: bool = False, limited: bool = False) -> list[str]:
    """The large tables a plan reads inside a correlated subquery (run once per outer row)
    without a LIMIT above the scan: a count or a list per merchant, whose cost is every
    merchant's rows. A hashed subplan runs once and is not one of them, nor is one whose rows
    are materialized (read once, then replayed for each outer row)."""
    name = node.get("Subplan Name", "")
    if node.get("Parent Relationship") == "SubPlan" and name.startswith("SubPlan"):
        correlated, limited = True, False
    if node.get("Node Type") in ("Limit", "Materialize"):  # a Materialize reads its input once
        limited = True
    found = [node["Relation Name"]] if correlated and not limited and node.get("Relation Name") in LARGE_TABLES else []
    for child in node.get("Plans", []):
        found += unbounded_subplan_scans(child, correlated=correlated, limited=limited)
    return found


def plan(statement: str, *, analyze: bool | str = False):
    """EXPLAIN of `statement`: its JSON; analyze=True: EXPLAIN (ANALYZE, BUFFERS)'s text;
    analyze="json": the JSON of an EXPLAIN ANALYZE (the statement runs)."""
    from django.db import connection

    with connection.cursor() as cursor:
        if analyze is True:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement)
            return "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(("EXPLAIN (ANALYZE, FORMAT JSON) " if analyze else "EXPLAIN (FORMAT JSON) ") + statement)
        found = cursor.fetchone()[0]
    return json.loads(found) if isinstance(found, str) else found


def main() -> None:
    """Print EXPLAIN (ANALYZE, BUFFERS) of every hot statement, as markdown, for merchant argv[1]
    (default BENCH). The paths run once as the product runs them (a sweep with nothing due
    writes nothing); each statement is then explained inside a transaction rolled back."""
    import django

    django.setup()
    from django.db import transaction

    from gateway.platform.models import Merchant

    merchant = Merchant.objects.get(code=sys.argv[1] if len(sys.argv) > 1 else "BENCH")
    paths = hot_paths(merchant)
    for name in NAMES:
        print(f"### {name}\n")
        for statement in statements_of(paths[name]):
            shown = statement if len(statement) < 600 else statement[:600] + " ..."
            with transaction.atomic():  # EXPLAIN ANALYZE runs an UPDATE or DELETE: undone
                explained = plan(statement, analyze=True)
                transaction.set_rollback(True)
            print(f"```sql\n{shown}\n```\n```\n{explained}\n```\n")


if __name__ == "__main__":
    main()
