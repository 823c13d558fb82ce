"""benchmarks/grown_run: the usual table on a database with a little history and on a grown one,
side by side, in one run (issue 30: "cost that stays flat as data grows").

    benchmarks/grown_run --grown-url postgres://.../gw_big [--rounds 3] [--seconds 5] [--label "5 million payments"]
    benchmarks/grown_run --sweeps-only     # the three sweeps per due row, both sides, nothing else

The grown database is filled beforehand, once, by benchmarks/bigdata.py (minutes for 5 million
payments; its merchant BENCH takes the largest share and its keys are in --grown-merchant, the
JSON create_merchant printed). The "empty" side is a fresh database with 2,000 payments of the
same shape (the same fill, one merchant), so both sides answer the same requests with the same
code: a refund list with a full first page, a month a year ago, old and new payments.

Each side runs its own stack (benchmarks/stack.py: gunicorn with sync workers, a Celery worker
and beat, Redis) on its database, one side after the other, and measures:

- closed-loop throughput and latency (wrk, p50/p99/max) of creation (S2S, hosted), enquiry of a
  new and of a year-old payment, refund creation, a refund by id, the merchant's refund list
  (first page, and a month a year ago), each beside the bare Django endpoint in the same round;
  the ratio grown/empty is of each endpoint's rate over its own side's bare rate (the machine
  is shared: a busier minute slows both the endpoint and the yardstick);
- the sweeps per due row: expiry (sessions past their expiry, until the beat has expired them
  all), webhook delivery (events queued in one transaction, until the receiver has them all),
  webhook retention (events past the retention, until webhook_history_delete_old has deleted
  them);
- the support console in-process: search by each identifier, the dashboard, the needs-attention
  queue (median of 5 calls, ms).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from benchmarks import bodies
from benchmarks.bench import log, median, ms_median
from benchmarks.stack import PG_BIN, PYTHON, ROOT, Stack

RECEIVER_PORT = 8393
SHARED_PG = "postgres://postgres:postgres@127.0.0.1:5432"
# The refund list's month a year ago is asked in pages this long, in-process and over HTTP: the
# small database's month holds 6 refunds, under a page of the default 20, and a short page skips
# the count and serialises fewer refunds, so the two sides did unequal work (grown / empty 0.67
# and 0.69 on a quiet machine).
MONTH_PAGE = 5


# --- steps run inside a stack's environment (python -m benchmarks.grown op ...) -----------------

def op_seed(code: str) -> dict:
    from benchmarks.bigdata import Size, fill

    return fill(Size(2000, merchants=1), merchant_code=code)


def op_targets(code: str) -> dict:
    """What the requests name, picked the same way on both sides."""
    from datetime import timedelta

    from django.utils import timezone

    from gateway.platform.models import Merchant
    from payments.models import Payment
    from refunds.models import Refund
    from webhooks.models import WebhookEvent

    merchant = Merchant.objects.get(code=code)
    now = timezone.now()
    mine = Payment.objects.filter(merchant=merchant)
    new = list(mine.order_by("-created_at").values_list("merchant_txn_id", flat=True)[:500])
    year_ago = now - timedelta(days=365)
    old = list(mine.filter(created_at__lt=year_ago).order_by("-created_at")
               .values_list("merchant_txn_id", flat=True)[:500])
    refundable = list(mine.filter(status="SUCCESS", refunded_amount=0, refund_pending_amount=0, amount__gte=1000)
                      .order_by("-created_at").values_list("sabpaisa_txn_id", flat=True)[:400])
    refunds = list(Refund.objects.filter(merchant=merchant).order_by("-created_at")
                   .values_list("refund_id", flat=True)[:500])
    month = (year_ago - timedelta(days=30)).date(), year_ago.date()
    paid = mine.filter(status="SUCCESS").exclude(bank_rrn="").order_by("-created_at")[100]
    refunded = Refund.objects.filter(merchant=merchant, status="SUCCESS").order_by("-created_at")[10]
    # The event of a payment, not one of an earlier run's drain (events without a payment).
    event = WebhookEvent.objects.filter(merchant=merchant, subject_id=paid.sabpaisa_txn_id).order_by("-created_at")[0]
    return {
        "new": new, "old": old, "refundable": refundable, "refunds": refunds,
        "month": [month[0].isoformat(), month[1].isoformat()],
        "search": {"sabpaisaTxnId": paid.sabpaisa_txn_id, "paymentId": paid.payment_id,
                   "merchantTxnId": paid.merchant_txn_id, "bank RRN": paid.bank_rrn,
                   "customer email": paid.customer_email, "customer phone": paid.customer_phone,
                   "refund bank reference": refunded.bank_refund_reference, "webhook event id": event.id},
    }


def op_console(terms_json: str) -> dict:
    from django.db import connection

    from gateway.console.attention import attention_sections
    from gateway.console.dashboard import dashboard_context
    from gateway.console.search import payment_search
    from payments.models import Payment

    # Any statement of these pages slower than 100 ms leaves its plan, with its timings, in
    # PostgreSQL's log (auto_explain): a slow figure comes with the reason.
    with connection.cursor() as cur:
        cur.execute("LOAD 'auto_explain'")
        cur.execute("SET auto_explain.log_min_duration = 100")
        cur.execute("SET auto_explain.log_analyze = on")
        cur.execute("SET auto_explain.log_buffers = on")
    terms = json.loads(terms_json)
    out = {}
    for name, term in terms.items():
        def search(term=term):
            found, _ = payment_search(Payment.objects.all(), term)
            rows = list(found[:100])
            assert rows, f"console search by {name} found nothing"
        out[f"console search: {name}"] = ms_median(search)
    out["console dashboard"] = ms_median(lambda: dashboard_context())
    out["console needs-attention queue"] = ms_median(lambda: [len(s.rows) for s in attention_sections()])
    return out


def op_lists(code: str, from_day: str, to_day: str) -> dict:
    """The refund list's selector in-process (its page and its count), median of 5 calls, ms:
    the figure without HTTP around it, to set beside EXPLAIN."""
    from datetime import date

    from gateway.platform.models import Merchant
    from refunds.selectors import refunds_page_for_merchant

    merchant = Merchant.objects.get(code=code)
    month = date.fromisoformat(from_day), date.fromisoformat(to_day)
    return {
        "refund list, first page (in-process)": ms_median(lambda: refunds_page_for_merchant(merchant=merchant)),
        "refund list, a month a year ago (in-process)": ms_median(
            lambda: refunds_page_for_merchant(merchant=merchant, from_day=month[0], to_day=month[1], size=MONTH_PAGE)),
    }


def op_retention(count: int) -> dict:
    """`count` webhook events past the retention, each with a delivered delivery and its
    attempt, then webhook_history_delete_old until they are gone: seconds per deleted event."""
    from django.db import connection, transaction

    from webhooks.retention import WEBHOOK_HISTORY_RETENTION, webhook_history_delete_old

    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("SELECT id FROM gateway_merchant WHERE code = 'BENCH'")
        merchant = cur.fetchone()[0]
        cur.execute("""
            INSERT INTO webhooks_webhookevent (id, event_type, subject_id, payload, body, created_at, merchant_id)
            SELECT 'evt_' || left(md5('old' || g || clock_timestamp()), 24), 'payment.success', 'SPOLD' || g,
                   '{"event": "payment.success"}', '{"event": "payment.success"}',
                   now() - %s - interval '1 day' - g * interval '1 second', %s
            FROM generate_series(1, %s) AS g""", [WEBHOOK_HISTORY_RETENTION, merchant, count])
        cur.execute("""
            INSERT INTO webhooks_webhookdelivery (status, attempts, cycle_attempts, claim_token, last_attempt_at,
                delivered_at, created_at, updated_at, merchant_id, event_id, url)
            SELECT 'delivered', 1, 1, '', created_at, created_at, created_at, created_at, merchant_id, id, ''
            FROM webhooks_webhookevent WHERE subject_id LIKE 'SPOLD%%'""")
        cur.execute("""
            INSERT INTO webhooks_webhookdeliveryattempt (number, outcome, url, started_at, finished_at, duration_ms,
                http_status, response_snippet, error, signature_header, delivery_id)
            SELECT 1, 'delivered', 'https://x.example/', created_at, created_at, 50, 200, 'ok', '', '', d.id
            FROM webhooks_webhookdelivery d WHERE d.event_id IN
                (SELECT id FROM webhooks_webhookevent WHERE subject_id LIKE 'SPOLD%%')""")
    t0 = time.perf_counter()
    deleted = 0
    while True:
        n = webhook_history_delete_old()
        deleted += n
        if not n:
            break
    seconds = time.perf_counter() - t0
    return {"deleted": deleted, "seconds": round(seconds, 2), "ms_per_row": round(1000 * seconds / max(deleted, 1), 3)}


OPS = {"seed": op_seed, "targets": op_targets, "console": op_console, "lists": op_lists, "retention": lambda n: op_retention(int(n))}


# --- the driver ---------------------------------------------------------------------------------

class Side:
    def __init__(self, label: str, database_url: str, creds: bodies.Credentials, args, work: Path):
        self.label, self.creds, self.args, self.work = label, creds, args, work
        self.stack = Stack(name=f"grown-{label}", redis_port=6393, web_port=8394, database_url=database_url,
                           web_workers=args.web_workers, worker_concurrency=args.worker_concurrency,
                           env={"SANDBOX_UPI_SUCCESS_DELAY_SECONDS": "1"})
        self.results: dict = {"rows": {}}
        # merchantTxnIds of this run's own: the grown database keeps every earlier run's orders.
        self.run_tag = f"{int(time.time()) % 10**6:06d}"

    def op(self, *args: str) -> dict:
        out = subprocess.run([PYTHON, "-m", "benchmarks.grown", "op", *args], cwd=ROOT, env=self.stack.env(),
                             check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    def requests(self, name: str, tag: str) -> list[bytes]:
        port, c, t = self.stack.web_port, self.creds, self.targets
        key = {"X-Api-Key": c.api_key}
        if name == "bare":
            return bodies.bare(port)
        if name == "S2S creation":
            return bodies.s2s(port, c, int(1500 * self.args.seconds), prefix=f"G{self.label[0]}{self.run_tag}{tag}-")
        if name == "hosted creation":
            return bodies.hosted(port, c, int(1500 * self.args.seconds), prefix=f"H{self.label[0]}{self.run_tag}{tag}-")
        if name == "enquiry, a new payment":
            return bodies.enquiry(port, c, t["new"])
        if name == "enquiry, a year-old payment":
            return bodies.enquiry(port, c, t["old"])
        if name == "refund creation (100 paise)":
            return [bodies.raw("POST", "/api/v2/refunds", port=port, headers={**key, "Content-Type": "application/json"},
                               body=json.dumps({"merchantId": c.code, "sabpaisaTxnId": txn, "refundAmount": 100,
                                                "reason": "bench"}).encode())
                    for txn in t["refundable"]]
        if name == "refund by id":
            return [bodies.raw("GET", f"/api/v2/refunds/{r}?merchantId={c.code}", port=port, headers=key)
                    for r in t["refunds"]]
        if name == "refund list, first page":
            return [bodies.raw("GET", f"/api/v2/refunds?merchantId={c.code}", port=port, headers=key)]
        if name == "refund list, a month a year ago":
            query = urllib.parse.urlencode({"merchantId": c.code, "fromDate": t["month"][0], "toDate": t["month"][1],
                                            "size": MONTH_PAGE})
            return [bodies.raw("GET", f"/api/v2/refunds?{query}", port=port, headers=key)]
        raise KeyError(name)

    def wrk(self, name: str, tag: str) -> dict:
        path = bodies.write(self.work / f"{self.label}-{tag}.req", self.requests(name, tag))
        out = subprocess.run(["wrk", "-t1", f"-c{self.args.connections}", f"-d{self.args.seconds}s", "--timeout", "10s",
                              "-s", str(ROOT / "benchmarks/wrk.lua"), self.stack.base_url, "--", str(path)],
                             capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.split("WRKJSON ", 1)[1].splitlines()[0])
        seconds = result["duration_us"] / 1e6
        result["ok_per_s"] = (result["requests"] - result["non2xx"]) / seconds
        if result["non2xx"]:
            log(f"  warning: {self.label} {name}: {result['non2xx']} of {result['requests']} not 2xx")
        return result

    def run(self) -> dict:
        log(f"{self.label}: stack up on {self.stack.database_url.rsplit('/', 1)[1]}")
        self.stack.up()
        # Its webhooks come to this run's receiver.
        self.stack.psql(f"UPDATE gateway_merchant SET webhook_url = 'http://127.0.0.1:{RECEIVER_PORT}/webhook' "
                        f"WHERE code = '{self.creds.code}'")
        if self.args.sweeps_only:
            self.sweeps()
            return self.results
        self.targets = self.op("targets", self.creds.code)
        names = ["S2S creation", "hosted creation", "enquiry, a new payment", "enquiry, a year-old payment",
                 "refund creation (100 paise)", "refund by id", "refund list, first page",
                 "refund list, a month a year ago"]
        for name in ("bare", "enquiry, a new payment"):  # warm-up: every worker has imported and connected
            self.wrk(name, f"warm-{name[:4]}")
        rows: dict[str, list] = {name: [] for name in ["bare"] + names}
        for r in range(self.args.rounds):
            for i, name in enumerate(names):
                bare = self.wrk("bare", f"b{r}-{i}")
                mine = self.wrk(name, f"{r}-{i}")
                mine["ratio_to_bare"] = mine["ok_per_s"] / bare["ok_per_s"]
                rows["bare"].append(bare)
                rows[name].append(mine)
            log(f"{self.label} round {r + 1}: " + ", ".join(f"{n} {rows[n][-1]['ok_per_s']:.0f}/s" for n in rows))
        for name, runs in rows.items():
            self.results["rows"][name] = {
                "per_s": median([x["ok_per_s"] for x in runs]), "p50_ms": median([x["p50_ms"] for x in runs]),
                "p99_ms": median([x["p99_ms"] for x in runs]), "max_ms": max(x["max_ms"] for x in runs),
                "ratio_to_bare": median([x.get("ratio_to_bare") for x in runs])}
        self.sweeps()
        self.results["console"] = {**self.op("lists", self.creds.code, *self.targets["month"]),
                                   **self.op("console", json.dumps(self.targets["search"]))}
        log(f"{self.label}: console {self.results['console']}")
        return self.results

    def sweeps(self) -> None:
        n = self.args.expiry
        if not self.stack.psql("SELECT 1 FROM gateway_merchant WHERE code = 'EXPIRY'"):
            self.stack.manage("create_merchant", "--code", "EXPIRY", "--name", "Expiry Stores")
        out = subprocess.run([PYTHON, "-m", "benchmarks.ops", "expiry", "EXPIRY", str(n)], cwd=ROOT,
                             env=self.stack.env(), check=True, capture_output=True, text=True)
        info = json.loads(out.stdout.strip().splitlines()[-1])
        open_sql = (f"SELECT count(*) FROM payments_payment WHERE merchant_id = {info['merchant_pk']} "
                    f"AND status IN ('PENDING', 'PROCESSING')")
        while time.time() - info["t0"] < 600 and int(self.stack.psql(open_sql)):
            time.sleep(0.25)
        seconds = time.time() - info["t0"]
        self.results["expiry"] = {"count": n, "seconds": round(seconds, 1), "ms_per_row": round(1000 * seconds / n, 3)}
        log(f"{self.label}: expiry of {n}: {seconds:.1f} s")

        n = self.args.drain
        before = self._receiver("/_stats")["events_acknowledged"]
        out = subprocess.run([PYTHON, "-m", "benchmarks.ops", "drain", self.creds.code, str(n), f"{self.label[0]}{int(time.time())}"],
                             cwd=ROOT, env=self.stack.env(), check=True, capture_output=True, text=True)
        t0 = json.loads(out.stdout.strip().splitlines()[-1])["t0"]
        while time.time() - t0 < 600 and self._receiver("/_stats")["events_acknowledged"] - before < n:
            time.sleep(0.25)
        seconds = time.time() - t0
        self.results["delivery"] = {"count": n, "seconds": round(seconds, 1), "ms_per_row": round(1000 * seconds / n, 3)}
        log(f"{self.label}: delivery of {n}: {seconds:.1f} s")

        self.results["retention"] = self.op("retention", str(self.args.retention))
        log(f"{self.label}: retention {self.results['retention']}")

    def _receiver(self, path: str) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{RECEIVER_PORT}{path}", timeout=10) as r:
            return json.loads(r.read())

    def close(self) -> None:
        self.stack.close()


def psql_admin(sql: str) -> None:
    subprocess.run([str(PG_BIN / "psql"), "-d", f"{SHARED_PG}/postgres", "-qc", sql], check=True)


def table(empty: dict, grown: dict, label: str) -> str:
    lines = [f"| what | empty (2,000 payments) | {label} | grown / empty |", "|---|---|---|---|"]
    for name, e in empty["rows"].items():
        g = grown["rows"][name]
        ratio = "" if name == "bare" else f"{g['ratio_to_bare'] / e['ratio_to_bare']:.2f}"
        cell = lambda x: f"{x['per_s']:.0f}/s, p50 {x['p50_ms']:.1f} p99 {x['p99_ms']:.1f} max {x['max_ms']:.0f} ms"  # noqa: E731
        lines.append(f"| {name} | {cell(e)} | {cell(g)} | {ratio} |")
    for sweep in ("expiry", "delivery", "retention"):
        e, g = empty[sweep], grown[sweep]
        count = e.get("count", e.get("deleted"))
        lines.append(f"| {sweep} sweep, ms per due row ({count} rows) | {e['ms_per_row']:.3f} | {g['ms_per_row']:.3f} | "
                     f"{g['ms_per_row'] / e['ms_per_row']:.2f} |")
    for name, e in empty.get("console", {}).items():
        g = grown["console"][name]
        lines.append(f"| {name}, ms | {e:.1f} | {g:.1f} | {g / max(e, 0.1):.2f} |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "op":
        import django

        django.setup()
        print(json.dumps(OPS[sys.argv[2]](*sys.argv[3:]), default=str))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grown-url", default=f"{SHARED_PG}/gw_big")
    parser.add_argument("--grown-merchant", default=str(ROOT / "var/benchmarks/big-merchant.json"))
    parser.add_argument("--label", default="5 million payments")
    parser.add_argument("--empty-db", default="gw_grown_empty")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--expiry", type=int, default=20_000)
    parser.add_argument("--drain", type=int, default=2_000)
    parser.add_argument("--retention", type=int, default=20_000)
    parser.add_argument("--only", choices=["empty", "grown"], help="one side only (its figures in --json)")
    parser.add_argument("--sweeps-only", action="store_true",
                        help="the sweeps alone: no endpoint rounds, no console (minutes instead of half an hour)")
    parser.add_argument("--json", default=str(ROOT / "var/benchmarks/grown.json"))
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gw-grown-"))
    receiver = subprocess.Popen([PYTHON, "-m", "benchmarks.receiver", "--port", str(RECEIVER_PORT)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    results = {}
    try:
        time.sleep(1)
        if args.only != "grown":
            psql_admin(f"DROP DATABASE IF EXISTS {args.empty_db}")
            psql_admin(f"CREATE DATABASE {args.empty_db}")
            side = Side("empty", f"{SHARED_PG}/{args.empty_db}", None, args, work)
            try:
                side.stack.manage("migrate", "--noinput")
                creds = json.loads(side.stack.manage(
                    "create_merchant", "--code", "BENCH", "--name", "Bench Stores", "--s2s", "--rate-limit", "100000",
                    "--webhook-url", f"http://127.0.0.1:{RECEIVER_PORT}/webhook"))
                side.creds = bodies.Credentials.from_json(creds)
                side.op("seed", "BENCH")
                results["empty"] = side.run()
            finally:
                side.close()
            psql_admin(f"DROP DATABASE IF EXISTS {args.empty_db}")
        if args.only != "empty":
            creds = bodies.Credentials.from_json(json.loads(Path(args.grown_merchant).read_text()))
            side = Side("grown", args.grown_url, creds, args, work)
            try:
                results["grown"] = side.run()
                results["grown"]["database"] = side.stack.psql(
                    "SELECT pg_size_pretty(pg_database_size(current_database()))")
                results["grown"]["payments"] = int(side.stack.psql("SELECT count(*) FROM payments_payment"))
            finally:
                side.close()
    finally:
        receiver.terminate()
        receiver.wait(10)
    previous = json.loads(Path(args.json).read_text()) if args.only and Path(args.json).exists() else {}
    results = {**previous, **results}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    if "empty" in results and "grown" in results:
        print(table(results["empty"], results["grown"], args.label))
    print(f"figures: {args.json}")


if __name__ == "__main__":
    main()
