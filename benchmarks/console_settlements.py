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

import json
import statistics
import sys
import time

from benchmarks.settlement_run import generated_month, main

REPEAT = 7


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
    from django.db.models import Count
    from django.test import Client

    from gateway.platform.models import Merchant
    from gateway.platform.services import merchant_rotate_api_key
    from refunds.models import ReconException, Settlement, SettlementLine
    from refunds.settlements.reconcile import reconcile

    month, generated = generated_month(args, seed=5)
    began = time.perf_counter()
    reconcile(as_of=month.end + timedelta(days=10))
    reconciled = time.perf_counter() - began

    busiest = (Settlement.objects.annotate(n=Count("lines")).order_by("-n")
               .values_list("pk", "n", "merchant_id", "public_id").first())
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


if __name__ == "__main__":
    sys.exit(main(inner, description=__doc__.split("\n\n")[0], name="console-settlements",
                  module="benchmarks.console_settlements", title="console settlements benchmark",
                  ports=(5461, 6461, 8461)))
