"""The reconciliation's speed (issue 31): reconcile 1,000,000 settlement lines against
1,000,000 payments and a statement of 10,000 bank credits, and print the seconds.

    .venv/bin/python -m benchmarks.reconcile                      # the full scale, ~10 minutes in all
    .venv/bin/python -m benchmarks.reconcile --payments 100000 --merchants 10 --days 100

It brings up a private PostgreSQL 15 cluster of its own on a loopback port (benchmarks/stack.py:
default settings, fsync on), migrates it, writes the activity with benchmarks/settlement_month.py
(SQL, not timed as the figure), runs ANALYZE (as autovacuum would have by then), then times
`refunds.settlements.reconcile.reconcile` twice: the first run over untouched data (it matches
every settlement to its credit and records the injected faults), the second over the same data
again (what the hourly beat costs when nothing changed). Both must find exactly the injected
faults; the script exits non-zero otherwise. The target: the first run under 60 s on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAULTS = {"not_settled": 10, "settled_twice": 10, "amount_mismatch": 10, "fee_mismatch": 10, "tax_not_gst": 10,
          "refund_mismatch": 10, "unknown_reference": 10, "bank_unmatched": 10, "unbalanced": 10}


def inner(args) -> None:
    import django

    django.setup()
    from datetime import timedelta

    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count

    from benchmarks.settlement_month import month_generate
    from refunds.models import ReconException, SettlementLine
    from refunds.settlements.reconcile import reconcile

    call_command("migrate", verbosity=0)
    began = time.perf_counter()
    month = month_generate(payments=args.payments, merchants=args.merchants, days=args.days,
                           chargebacks=args.chargebacks, faults=FAULTS, seed=3)
    generated = time.perf_counter() - began
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    lines = SettlementLine.objects.count()
    as_of = month.end + timedelta(days=10)
    runs = []
    for _ in range(2):
        began = time.perf_counter()
        result = reconcile(as_of=as_of)
        runs.append((time.perf_counter() - began, result))
    found = dict(ReconException.objects.values_list("kind").annotate(n=Count("id")))
    report = {"payments": month.payments, "settlement_lines": lines, "settlements": month.settlements,
              "bank_credits": month.settlements, "refunds": month.refunds, "chargebacks": month.chargebacks,
              "generate_seconds": round(generated, 1), "generate_phases": month.seconds,
              "reconcile_seconds": round(runs[0][0], 2), "reconcile_again_seconds": round(runs[1][0], 2),
              "bank_matched": runs[0][1].bank_matched, "found": found, "injected": FAULTS,
              "all_found_none_else": found == FAULTS and runs[1][1].total == 0}
    print(json.dumps(report, indent=2))
    sys.exit(0 if report["all_found_none_else"] else 1)


def outer(args) -> int:
    from benchmarks.stack import Stack

    stack = Stack(name="reconcile", pg_port=args.pg_port, redis_port=args.redis_port, web_port=args.web_port)
    try:
        stack.postgres_init()
        stack.redis_start()
        cores = os.cpu_count()
        print(f"reconcile benchmark: {args.payments} payments, {args.merchants} merchants x {args.days} days "
              f"of settlements; {cores} cores; PostgreSQL on port {args.pg_port}", flush=True)
        command = [sys.executable, "-m", "benchmarks.reconcile", "--inner", "--payments", str(args.payments),
                   "--merchants", str(args.merchants), "--days", str(args.days), "--chargebacks", str(args.chargebacks)]
        return subprocess.run(command, cwd=ROOT, env=stack.env()).returncode
    finally:
        stack.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--merchants", type=int, default=100)
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--chargebacks", type=int, default=50)
    parser.add_argument("--pg-port", type=int, default=5447)
    parser.add_argument("--redis-port", type=int, default=6397)
    parser.add_argument("--web-port", type=int, default=8397)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args)
        return 0
    return outer(args)


if __name__ == "__main__":
    sys.exit(main())
