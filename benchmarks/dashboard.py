"""The console on a busy day (issue 30: "console search by each identifier, the dashboard and the
needs-attention queue under 300 ms"), on a database grown by benchmarks/bigdata.py:

    python -m benchmarks.bigdata --payments 1000000 --merchants 1000 --merchant-code BENCH
    python -m benchmarks.dashboard --busy-day 75000 [--merchant BENCH]   (DATABASE_URL set, migrated)

--busy-day N first adds N payments created over the last 24 hours, copied from the fill's newest
history (the same merchants, methods, statuses and amounts, new identifiers), the last half hour's
hosted ones still PENDING and the last five minutes' S2S ones PROCESSING, as on a live day; then
VACUUM (ANALYZE), as autovacuum would. The dashboard's cost follows the day's volume, not the
history's (docs/performance.md, "The dashboard on a busy day").

Then, median of 5 calls in-process (ms), and the largest EXPLAIN (ANALYZE, BUFFERS) figures of
their statements (benchmarks/hotpaths.py walks the same paths):
- the dashboard's payment statements as they stood before D23 (one aggregate over the day by
  method and status, one by IST hour);
- the dashboard (gateway.console.dashboard.dashboard_context) with nothing folded (beat never
  ran: every payment of the day counted live) and after gateway.console.buckets folded the day;
- the needs-attention queue and the console search by each identifier.
"""
from __future__ import annotations

import argparse
import json
import time
from datetime import timedelta

from benchmarks.bench import ms_median

# How the dashboard read the day before D23 (payments.selectors until then).
BEFORE = {
    "by method and status": """SELECT payment_mode, status, COUNT(id) FROM payments_payment
        WHERE created_at >= now() - interval '24 hours' GROUP BY 1, 2""",
    "by IST hour": """SELECT date_trunc('hour', created_at AT TIME ZONE 'Asia/Kolkata') AS hour, COUNT(id),
        COUNT(id) FILTER (WHERE status = 'SUCCESS') FROM payments_payment
        WHERE created_at >= now() - interval '24 hours' GROUP BY 1""",
}


def busy_day(payments: int, *, vacuum: bool = True) -> dict:
    """Add `payments` payments over the last 24 hours (see the module's docstring); then VACUUM
    (ANALYZE) the payments, or with vacuum=False (inside a transaction: tests) nothing."""
    from django.db import connection, transaction

    overrides = {
        "sabpaisa_txn_id": "'SPD' || lpad(g::text, 17, '0')", "payment_id": "'pay_d' || g",
        "merchant_txn_id": "'DAY-' || g", "created_at": "c", "updated_at": "c",
        "status": "st", "expires_at": "c + CASE WHEN flow = 'HOSTED' THEN interval '30 minutes' "
                                     "ELSE interval '15 minutes' END",
        "completed_at": "CASE WHEN st IN ('PENDING', 'PROCESSING') THEN NULL ELSE c + (completed_at - created_at) END",
        "payment_mode": "CASE WHEN st = 'PENDING' THEN '' ELSE payment_mode END",
        "bank_rrn": "CASE WHEN st = 'SUCCESS' THEN bank_rrn ELSE '' END",
        "paid_amount": "CASE WHEN st = 'SUCCESS' THEN paid_amount END",
        "failure_reason": "CASE WHEN st IN ('PENDING', 'PROCESSING') THEN '' ELSE failure_reason END",
        "refund_pending_amount": "0", "refunded_amount": "0", "open_dispute": "NULL",
        "transfer_reference": "''", "acquirer_call_started_at": "NULL",
    }
    with connection.cursor() as cur:
        cur.execute("""SELECT column_name FROM information_schema.columns
                       WHERE table_name = 'payments_payment' AND column_name <> 'id' ORDER BY ordinal_position""")
        columns = [row[0] for row in cur.fetchall()]
    select = ", ".join(overrides.get(column, column) for column in columns)
    t0 = time.monotonic()
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("SET LOCAL synchronous_commit = off")
        cur.execute(f"""
            INSERT INTO payments_payment ({", ".join(columns)})
            SELECT {select} FROM (
                SELECT p.*, c,
                       CASE WHEN c > now() - interval '30 minutes' AND flow = 'HOSTED' AND mod(g, 2) = 0 THEN 'PENDING'
                            WHEN c > now() - interval '5 minutes' AND flow = 'S2S' THEN 'PROCESSING'
                            ELSE status END AS st
                FROM (SELECT row_number() OVER (ORDER BY id DESC) AS g, * FROM payments_payment
                      WHERE merchant_txn_id LIKE 'ORD-%%' ORDER BY id DESC LIMIT %(n)s) AS p
                CROSS JOIN LATERAL (SELECT now() - interval '24 hours' * ((g - 0.5) / %(n)s) AS c) AS t
            ) AS day
            ORDER BY c""", {"n": payments})
        added = cur.rowcount
    seconds = time.monotonic() - t0
    if vacuum:
        with connection.cursor() as cur:
            cur.execute("VACUUM (ANALYZE) payments_payment")
    return {"added": added, "seconds": round(seconds, 1)}


def explained(statements: list[str]) -> dict:
    """The slowest statement's execution time, the total buffers and any large table read whole."""
    import re

    from django.db import transaction

    from benchmarks.hotpaths import plan, sequential_scans

    slowest, buffers, scans = 0.0, 0, []
    for statement in statements:
        with transaction.atomic():
            text = plan(statement, analyze=True)
            scans += sequential_scans(plan(statement)[0]["Plan"])
            transaction.set_rollback(True)
        slowest = max(slowest, float(re.search(r"Execution Time: ([\d.]+)", text).group(1)))
        first = re.search(r"Buffers: ([^\n]+)", text)
        buffers += sum(int(n) for n in re.findall(r"=(\d+)", first.group(1))) if first else 0
    return {"statements": len(statements), "slowest_ms": round(slowest, 2), "buffers": buffers,
            "sequential_scans": sorted(set(scans))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--busy-day", type=int, default=0, help="first add this many payments over the last day")
    parser.add_argument("--merchant", default="BENCH", help="the merchant whose identifiers are searched")
    parser.add_argument("--explain", action="store_true", help="print the dashboard's plans, before and after")
    args = parser.parse_args()
    import django

    django.setup()
    from django.db import connection
    from django.utils import timezone

    from benchmarks.hotpaths import hot_paths, plan, statements_of
    from gateway.console.buckets import dashboard_buckets_fold
    from gateway.console.dashboard import dashboard_context
    from gateway.console.models import DashboardBucket
    from gateway.platform.models import Merchant

    out: dict = {}
    if args.busy_day:
        out["busy day"] = busy_day(args.busy_day)
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM payments_payment")
        total = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM payments_payment WHERE created_at >= now() - interval '24 hours'")
        out["payments"] = {"all": total, "last 24 hours": cur.fetchone()[0]}
    rows = {}

    def timed(name, run, statements):
        rows[name] = {"median_ms": ms_median(run), **explained(statements)}

    before = list(BEFORE.values())
    timed("dashboard's day of payments before D23 (2 statements)",
          lambda: [connection.cursor().execute(sql) for sql in before], before)
    DashboardBucket.objects.all().delete()
    timed("dashboard, nothing folded (beat never ran)", dashboard_context, statements_of(dashboard_context))
    t0 = time.perf_counter()
    folded = dashboard_buckets_fold()
    out["first fold"] = {"buckets": folded, "ms": round(1000 * (time.perf_counter() - t0), 1)}
    t0 = time.perf_counter()
    dashboard_buckets_fold(timezone.now() + timedelta(minutes=1))
    out["next fold, a minute later"] = {"ms": round(1000 * (time.perf_counter() - t0), 1)}
    timed("dashboard, folded (as with beat running)", dashboard_context, statements_of(dashboard_context))
    paths = hot_paths(Merchant.objects.get(code=args.merchant))
    for name, run in paths.items():
        if name.startswith("console search") or name == "console needs-attention queue":
            timed(name, run, statements_of(run))
    out["rows"] = rows
    if args.explain:
        for label, statements in (("before D23", before), ("after D23", statements_of(dashboard_context))):
            for statement in statements:
                if "payments_payment" in statement and "console_dashboardbucket" not in statement:
                    print(f"-- {label}\n{statement[:500]}\n{plan(statement, analyze=True)}\n")
    print(json.dumps(out, indent=1))
    print(f"\n| what | median ms | slowest statement ms | buffers | large table read whole |\n|---|---|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['median_ms']} | {row['slowest_ms']} | {row['buffers']} | "
              f"{', '.join(row['sequential_scans']) or 'none'} |")


if __name__ == "__main__":
    main()
