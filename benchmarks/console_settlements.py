"""How fast finance's settlement pages and the merchant's settlement API answer with a busy
month behind them (issue 31: "the console pages stay under 300 ms with that data"), printed as
figures; nothing here passes or fails on time.

    .venv/bin/python -m benchmarks.console_settlements                  # 1,000,000 payments and lines
    .venv/bin/python -m benchmarks.console_settlements --payments 100000 --merchants 2 --days 30

Like benchmarks/reconcile.py: a private PostgreSQL cluster on a loopback port
(benchmarks/stack.py), migrated, the activity written by benchmarks/settlement_month.py (with
each kind of fault injected), ANALYZE, and one reconciliation, so that the exceptions queue has
rows and settlements are matched to bank credits. Then each page is requested through Django's
test client (signed in as finance; the whole request: middleware, the queries, the template)
REPEAT times after one warm-up, and the median and the slowest are printed in milliseconds, with
the queries each made. The settlement pages use the busiest settlement (most lines); its lines
are read at the first page and at the last. The CSV is timed whole, with its rows per second.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEAT = 7
FAULTS = {"not_settled": 10, "settled_twice": 10, "amount_mismatch": 10, "fee_mismatch": 10, "tax_not_gst": 10,
          "refund_mismatch": 10, "unknown_reference": 10, "bank_unmatched": 10, "unbalanced": 10}


def _time(fetch) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    fetch()  # warm: the session, content types, the plan cache
    seconds = []
    queries = 0
    for _ in range(REPEAT):
        with CaptureQueriesContext(connection) as captured:
            began = time.perf_counter()
            size = fetch()
            seconds.append(time.perf_counter() - began)
        queries = len(captured)
    return {"median_ms": round(statistics.median(seconds) * 1000, 1), "max_ms": round(max(seconds) * 1000, 1),
            "queries": queries, **({"bytes": size} if isinstance(size, int) and size > 0 else {})}


def inner(args) -> None:
    import django

    django.setup()
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count
    from django.test import Client

    from benchmarks.settlement_month import month_generate
    from gateway.platform.models import Merchant
    from gateway.platform.services import merchant_rotate_api_key
    from refunds.models import ReconException, Settlement, SettlementLine
    from refunds.settlements.reconcile import reconcile

    call_command("migrate", verbosity=0)
    began = time.perf_counter()
    month = month_generate(payments=args.payments, merchants=args.merchants, days=args.days,
                           chargebacks=args.chargebacks, faults=FAULTS, seed=5)
    generated = time.perf_counter() - began
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    began = time.perf_counter()
    reconcile(as_of=month.end + timedelta(days=10))
    reconciled = time.perf_counter() - began

    busiest = (Settlement.objects.annotate(n=Count("lines")).order_by("-n").values_list("pk", "n", "merchant_id", "public_id")
               .first())
    settlement_pk, line_count, merchant_pk, public_id = busiest
    last_page = -(-line_count // 100)
    exception = ReconException.objects.order_by("-id").first()
    user = get_user_model().objects.create_user("bench-finance", password="x", is_staff=True)
    user.groups.add(Group.objects.get(name="finance"))
    console = Client()
    console.force_login(user)
    merchant = Merchant.objects.get(pk=merchant_pk)
    api_key = merchant_rotate_api_key(merchant=merchant)
    api = Client(HTTP_X_API_KEY=api_key)

    def page(url, client=console):
        def fetch():
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            return len(response.content)
        return fetch

    def csv():
        response = console.post(f"/admin/console/settlements/{settlement_pk}/csv/")
        assert response.status_code == 200
        return sum(len(chunk) for chunk in response.streaming_content)

    pages = {
        "settlements list": page("/admin/console/settlements/"),
        "settlements short or in doubt": page("/admin/console/settlements/?short=on"),
        "settlements of one merchant, not matched": page(
            f"/admin/console/settlements/?merchant={merchant.code}&bank=unmatched"),
        "busiest settlement, first page of lines": page(f"/admin/console/settlements/{settlement_pk}/"),
        "busiest settlement, last page of lines": page(f"/admin/console/settlements/{settlement_pk}/?p={last_page}"),
        "exceptions queue": page("/admin/console/reconciliation/exceptions/"),
        "exceptions queue, one kind": page("/admin/console/reconciliation/exceptions/?kind=fee_mismatch"),
        "an exception": page(f"/admin/console/reconciliation/exceptions/{exception.pk}/"),
        "dashboard": page("/admin/console/dashboard/"),
        "API: GET /api/v2/settlements": page("/api/v2/settlements", api),
        "API: GET /api/v2/settlements/{id}, 500 lines": page(f"/api/v2/settlements/{public_id}", api),
    }
    figures = {name: _time(fetch) for name, fetch in pages.items()}
    began = time.perf_counter()
    size = csv()
    csv_seconds = time.perf_counter() - began
    report = {"payments": month.payments, "settlement_lines": SettlementLine.objects.count(),
              "settlements": month.settlements, "exceptions": ReconException.objects.count(),
              "busiest_settlement_lines": line_count, "generate_seconds": round(generated, 1),
              "reconcile_seconds": round(reconciled, 1), "pages": figures,
              "merchant_csv_of_busiest": {"seconds": round(csv_seconds, 2), "bytes": size,
                                          "lines_per_second": round(line_count / csv_seconds)}}
    print(json.dumps(report, indent=2))


def outer(args) -> int:
    from benchmarks.stack import Stack

    stack = Stack(name="console-settlements", pg_port=args.pg_port, redis_port=args.redis_port,
                  web_port=args.web_port)
    try:
        stack.postgres_init()
        stack.redis_start()
        print(f"console settlements benchmark: {args.payments} payments, {args.merchants} merchants x {args.days} "
              f"days; {os.cpu_count()} cores; PostgreSQL on port {args.pg_port}", flush=True)
        command = [sys.executable, "-m", "benchmarks.console_settlements", "--inner", "--payments",
                   str(args.payments), "--merchants", str(args.merchants), "--days", str(args.days),
                   "--chargebacks", str(args.chargebacks)]
        return subprocess.run(command, cwd=ROOT, env=stack.env()).returncode
    finally:
        stack.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--merchants", type=int, default=100)
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--chargebacks", type=int, default=50)
    parser.add_argument("--pg-port", type=int, default=5461)
    parser.add_argument("--redis-port", type=int, default=6461)
    parser.add_argument("--web-port", type=int, default=8461)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args)
        return 0
    return outer(args)


if __name__ == "__main__":
    sys.exit(main())
