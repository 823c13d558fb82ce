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

import json
import sys
import time

from benchmarks.settlement_run import FAULTS, generated_month, main


def inner(args) -> None:
    import django

    django.setup()
    from datetime import timedelta

    from django.db.models import Count

    from refunds.models import ReconException, SettlementLine
    from refunds.settlements.reconcile import reconcile

    month, generated = generated_month(args, seed=3)
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


if __name__ == "__main__":
    sys.exit(main(inner, description=__doc__.split("\n\n")[0], name="reconcile", module="benchmarks.reconcile",
                  title="reconcile benchmark", ports=(5447, 6397, 8397)))
