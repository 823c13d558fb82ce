"""Every hot statement finds its rows through an index, on a database with some history.

On an empty database PostgreSQL reads whole tables because they are small, and every plan
looks fine; the statements that read whole tables only show at millions of rows, as the
needs-attention queue did (a sequential scan of every webhook delivery and every refund,
issue 30). So this test fills a moderate history with the big-data benchmark's own fill
(benchmarks/bigdata.py: 60,000 payments over 18 months and 600 merchants, the merchant under
test holding about 4% of it, as the largest of a thousand does at 5 million), runs each hot
path of the merchant API, the sweeps and the support console as the product runs it, and asks
PostgreSQL for the plan of every statement it sent (EXPLAIN, FORMAT JSON): none may read a
large table from end to end, nor read one once per row of a list without a bound (the
dashboard counted each merchant's dead webhooks by reading its whole week of deliveries, a
thousand times over). A behaviour test, not a timed one: the figures are in
docs/performance.md and benchmarks/RESULTS.md."""
from __future__ import annotations

import pytest
from django.db import connection

from benchmarks.bigdata import Size, fill
from benchmarks.hotpaths import (LARGE_TABLES, NAMES, hot_paths, plan, sequential_scans, statements_of,
                                 unbounded_subplan_scans)
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db


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


@pytest.mark.parametrize("path", NAMES)
def test_no_hot_statement_reads_a_large_table_end_to_end(grown, path):
    statements = statements_of(hot_paths(grown)[path])
    assert statements, f"{path} sent no statement"
    plans = [(statement, plan(statement)[0]["Plan"]) for statement in statements]
    scans = [(statement[:200], tables) for statement, tree in plans if (tables := sequential_scans(tree))]
    assert not scans, f"{path} reads whole tables: {scans}"
    # Nor a large table once per row of a list: the dashboard counted each merchant's dead
    # deliveries in a subquery that read the merchant's whole week of deliveries (issue 30).
    per_row = [(statement[:200], tables) for statement, tree in plans if (tables := unbounded_subplan_scans(tree))]
    assert not per_row, f"{path} reads a large table per row of a list: {per_row}"


def _rows_read(node: dict) -> dict[str, int]:
    """Rows of each large table an analyzed plan read, kept or filtered away, over all its loops."""
    read = {}
    if node.get("Relation Name") in LARGE_TABLES:
        read[node["Relation Name"]] = (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * node.get(
            "Actual Loops", 1)
    for child in node.get("Plans", []):
        for table, rows in _rows_read(child).items():
            read[table] = read.get(table, 0) + rows
    return read


def test_the_payments_sweep_reads_no_open_payment_that_is_not_due(grown):
    """The payments sweep runs every second. Open UPI payments wait for their payer (5 minutes by
    default: 45,000 of them at 150 creations a second), and none is due: a sweep that reads them,
    or the events of every payment, costs the database more each second as the business grows.
    Its safety nets did both: one asked every PROCESSING payment whether it was a card or bank
    payment left on the acquirer's page, and two read the whole events table for the few open
    payments a payer had claimed."""
    from payments.tasks import payments_expire_sweep

    with connection.cursor() as cursor:  # the fill's expired UPI payments, made open again, unclaimed
        cursor.execute("UPDATE payments_payment SET status = 'PROCESSING', payer_vpa = '', completed_at = NULL, "
                       "expires_at = now() + interval '5 minutes' WHERE flow = 'S2S' AND status = 'EXPIRED'")
        assert cursor.rowcount > 2000
        cursor.execute("ANALYZE payments_payment")

    statements = [s for s in statements_of(payments_expire_sweep) if s.lstrip().upper().startswith("SELECT")]

    assert len(statements) >= 4
    read = {statement[:300]: _rows_read(plan(statement, analyze="json")[0]["Plan"]) for statement in statements}
    assert not {statement: rows for statement, rows in read.items() if sum(rows.values()) > 10}
