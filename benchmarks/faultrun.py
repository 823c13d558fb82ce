"""benchmarks/faults: payments, refunds and webhooks flowing while things break, then counts.

On a private stack (benchmarks/stack.py; PostgreSQL with its default durability settings,
fsync and synchronous_commit on), benchmarks/faultload.py plays a merchant: about 1,400
S2S orders paid, declined or left to expire, 600 of them refunded twice at once, retrying
every unanswered call with the same keys. That records about 2,000 webhook events for a
trivial receiver on loopback. Meanwhile this script:

- kills the Celery worker with SIGKILL (worker and pool together) 20 times, each time while
  a webhook attempt is in flight, and starts a new one;
- restarts Redis twice (no persistence: every queued message is lost) and PostgreSQL once
  (an immediate stop, that is a crash, then recovery);
- has the receiver answer 500 for 15 s and hang without answering for 15 s.

Then it waits for the system to settle and prints: events recorded, delivered, lost (must be
0), duplicate deliveries (allowed, each with its event id and identical body), payments
created twice (0), refunds over the paid amount (0) and 5xx answers outside the seconds
PostgreSQL was down. Bounded: it stops by itself, in about 6 minutes.

Usage: benchmarks/faults [--orders 1400] [--rate 8] [--kills 20] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.stack import PYTHON, ROOT, Stack

# Ports of their own, so that the fault run and benchmarks/run can run side by side.
PORTS = {"pg_port": 5442, "redis_port": 6392, "web_port": 8394}
RECEIVER_PORT = 8395
# Documented settings (README, Configuration), shortened so that the run settles in minutes:
# retries after 1, 2, 4 ... s instead of 10 s, 1 min ...; refunds left pending by a lost
# message are resubmitted after 10 s instead of 60 s.
ENV = {
    "WEBHOOK_RETRY_SCHEDULE": "1,2,4,8,15,30,60,60,60,60,60,60,120,120",
    "SANDBOX_UPI_SUCCESS_DELAY_SECONDS": "1",
    "REFUND_PENDING_SWEEP_AFTER_SECONDS": "10",
    "REFUND_CLAIM_SECONDS": "20",
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}Z] {message}", file=sys.stderr, flush=True)


class FaultRun:
    def __init__(self, args):
        self.args = args
        self.events: list[dict] = []  # the faults, as they happened
        self.pg_down: list[tuple[float, float]] = []
        self.kills_in_flight = 0

    def psql(self, query: str) -> str | None:
        try:
            return self.stack.psql(query)
        except subprocess.CalledProcessError:
            return None  # PostgreSQL is down

    def count(self, query: str) -> int | None:
        out = self.psql(query)
        return int(out) if out not in (None, "") else None

    def receiver(self, method: str, path: str) -> dict:
        req = urllib.request.Request(f"http://127.0.0.1:{RECEIVER_PORT}{path}", method=method,
                                     data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    # --- faults ---------------------------------------------------------------------------
    def kill_worker(self) -> None:
        # Wait (a little) for an attempt in flight, so the kill lands mid-delivery.
        in_flight = False
        deadline = time.time() + 5
        while time.time() < deadline:
            n = self.count("SELECT count(*) FROM webhooks_webhookdeliveryattempt WHERE finished_at IS NULL "
                           "AND started_at > now() - interval '10 seconds'")
            if n:
                in_flight = True
                break
            time.sleep(0.1)
        self.stack.worker_kill()
        self.kills_in_flight += in_flight
        self.events.append({"t": time.time(), "fault": "worker SIGKILL", "attempt_in_flight": in_flight})
        self.stack.worker_start(wait=False)

    def restart_redis(self) -> None:
        down = time.time()
        self.stack.redis_stop()
        time.sleep(3)
        self.stack.redis_start()
        self.events.append({"t": down, "fault": "redis restart", "down_s": round(time.time() - down, 1)})

    def restart_postgres(self) -> None:
        down = time.time()
        self.stack.postgres_stop("immediate")  # a crash: recovery from the WAL on start
        time.sleep(4)
        self.stack.postgres_start()
        while not self.stack.postgres_ready():
            time.sleep(0.1)
        up = time.time()
        self.pg_down.append((down, up))
        self.events.append({"t": down, "fault": "postgres crash and restart", "down_s": round(up - down, 1)})

    def receiver_mode(self, mode: str) -> None:
        self.receiver("POST", f"/_mode/{mode}")
        self.events.append({"t": time.time(), "fault": f"receiver {mode}"})

    def schedule(self) -> list[tuple[float, str, callable]]:
        plan = [(6 + k * 8.5, "kill", self.kill_worker) for k in range(self.args.kills)]
        plan += [(40, "redis", self.restart_redis), (125, "redis", self.restart_redis),
                 (85, "postgres", self.restart_postgres),
                 (55, "500", lambda: self.receiver_mode("error")), (70, "ok", lambda: self.receiver_mode("ok")),
                 (140, "hang", lambda: self.receiver_mode("hang")), (155, "ok", lambda: self.receiver_mode("ok"))]
        return sorted(plan, key=lambda p: p[0])

    # --- the run --------------------------------------------------------------------------
    def run(self) -> dict:
        log(f"load average before start: {os.getloadavg()}")
        keep = ROOT / "var" / "benchmarks" / "faults-last-run"
        self.stack = Stack(name="faults", env=ENV, keep_logs=keep, worker_concurrency=self.args.worker_concurrency,
                           **PORTS)
        self.stack._spawn("receiver", [PYTHON, "-m", "benchmarks.receiver", "--port", str(RECEIVER_PORT),
                                       "--delay", "0.05", "--hang-seconds", "15"])
        try:
            log(f"bringing the stack up in {self.stack.dir}")
            self.stack.up()
            creds = json.loads(self.stack.manage(
                "create_merchant", "--code", "FAULTS", "--name", "Fault Stores", "--s2s", "--rate-limit", "100000",
                "--webhook-url", f"http://127.0.0.1:{RECEIVER_PORT}/webhook"))
            creds_path = self.stack.dir / "creds.json"
            creds_path.write_text(json.dumps(creds))
            out_path = self.stack.dir / "load.json"
            log(f"traffic: {self.args.orders} orders at {self.args.rate}/s; faults on schedule")
            driver = subprocess.Popen([PYTHON, "-m", "benchmarks.faultload", "--port", str(self.stack.web_port),
                                       "--creds", str(creds_path), "--orders", str(self.args.orders),
                                       "--rate", str(self.args.rate), "--out", str(out_path)],
                                      cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
            start = time.time()
            for offset, name, action in self.schedule():
                delay = start + offset - time.time()
                if delay > 0:
                    time.sleep(delay)
                action()
                log(f"  t+{time.time() - start:5.1f} s  {self.events[-1]['fault']}"
                    + (" (attempt in flight)" if self.events[-1].get("attempt_in_flight") else ""))
            self.receiver_mode("ok")
            if "worker" not in self.stack.procs:
                self.stack.worker_start()
            driver.wait(timeout=900)
            log(f"traffic done after {time.time() - start:.0f} s; waiting for the system to settle")
            settled = self.settle(start)
            load = json.loads(out_path.read_text())
            return self.counts(load, settled, time.time() - start)
        finally:
            self.stack.close()

    def settle(self, start: float) -> float | None:
        """Wait until no payment, refund or delivery is left open and the receiver has every
        event, or until the deadline; returns how long it took, None at the deadline."""
        merchant = "(SELECT id FROM gateway_merchant WHERE code = 'FAULTS')"
        deadline = time.time() + self.args.settle
        while time.time() < deadline:
            open_payments = self.count(f"SELECT count(*) FROM payments_payment WHERE merchant_id = {merchant} "
                                       "AND status IN ('PENDING', 'PROCESSING')")
            open_refunds = self.count("SELECT count(*) FROM refunds_refund WHERE status = 'INITIATED'")
            open_deliveries = self.count("SELECT count(*) FROM webhooks_webhookdelivery "
                                         "WHERE status IN ('pending', 'failed')")
            recorded = self.count(f"SELECT count(*) FROM webhooks_webhookevent WHERE merchant_id = {merchant}")
            acknowledged = self.receiver("GET", "/_stats")["events_acknowledged"]
            if (open_payments, open_refunds, open_deliveries) == (0, 0, 0) and recorded == acknowledged:
                return time.time() - start
            time.sleep(2)
        return None

    def counts(self, load: dict, settled: float | None, total_s: float) -> dict:
        merchant = "(SELECT id FROM gateway_merchant WHERE code = 'FAULTS')"
        event_ids = set((self.psql(f"SELECT id FROM webhooks_webhookevent WHERE merchant_id = {merchant}")
                         or "").split())
        records_path = self.stack.dir / "receiver.jsonl"
        self.receiver("POST", f"/_dump?path={records_path}")
        acknowledged: dict[str, int] = {}
        bodies: dict[str, set] = {}
        for line in records_path.read_text().splitlines():
            _, event_id, digest, answer = json.loads(line)
            bodies.setdefault(event_id, set()).add(digest)
            if answer == 200:
                acknowledged[event_id] = acknowledged.get(event_id, 0) + 1
        by_type = dict(line.split("|") for line in (self.psql(
            f"SELECT event_type, count(*) FROM webhooks_webhookevent WHERE merchant_id = {merchant} "
            "GROUP BY event_type ORDER BY 1") or "").splitlines())
        orders = load["orders"]
        client_twice = sum(1 for o in orders.values() if len(set(o.get("payment_ids", []))) > 1)
        calls = load["calls"]
        fivexx = [c for c in calls if c[4] is not None and c[4] >= 500]

        def during_pg_outage(call) -> bool:
            return any(down <= call[1] and call[0] <= up for down, up in self.pg_down)

        refund_outcomes: dict[str, int] = {}
        for o in orders.values():
            if o.get("kind") == "refunded":
                answers = sorted(str(v[-1][1]) for v in o.get("refunds", {}).values())
                refund_outcomes[" + ".join(answers) or "none"] = refund_outcomes.get(" + ".join(answers) or "none", 0) + 1
        result = {
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{os.cpu_count()} cores", "load_after": os.getloadavg(),
            "orders": len(orders), "calls": len(calls), "seconds": round(total_s), "settled_after_s":
                None if settled is None else round(settled),
            "events_recorded": len(event_ids), "events_by_type": by_type,
            "events_delivered": len(event_ids & set(acknowledged)),
            "lost": len(event_ids - set(acknowledged)),
            "duplicate_deliveries": sum(n - 1 for n in acknowledged.values()),
            "events_delivered_more_than_once": sum(1 for n in acknowledged.values() if n > 1),
            "duplicates_with_differing_bodies": sum(1 for e in acknowledged if len(bodies.get(e, ())) > 1),
            "unknown_event_ids_at_receiver": len(set(acknowledged) - event_ids),
            "deliveries_dead": self.count("SELECT count(*) FROM webhooks_webhookdelivery WHERE status = 'dead'"),
            "payments_created_twice": self.count(
                f"SELECT count(*) FROM (SELECT merchant_txn_id FROM payments_payment WHERE merchant_id = {merchant} "
                "GROUP BY merchant_txn_id HAVING count(*) > 1) t") + client_twice,
            "orders_answered_with_two_payment_ids": client_twice,
            "refunds_over_paid_amount": self.count(
                "SELECT count(*) FROM (SELECT p.id FROM payments_payment p JOIN refunds_refund r ON r.payment_id = p.id "
                "WHERE r.status <> 'FAILED' GROUP BY p.id, p.paid_amount, p.amount "
                "HAVING sum(r.amount) > coalesce(p.paid_amount, p.amount)) t"),
            "refund_outcomes_per_order": refund_outcomes,
            "final_payments_without_their_event": self.count(
                f"SELECT count(*) FROM payments_payment p WHERE p.merchant_id = {merchant} "
                "AND p.status IN ('SUCCESS', 'FAILED', 'EXPIRED') AND (SELECT count(*) FROM webhooks_webhookevent e "
                "WHERE e.subject_id = p.sabpaisa_txn_id AND e.event_type LIKE 'payment.%') <> 1"),
            "final_refunds_without_their_event": self.count(
                "SELECT count(*) FROM refunds_refund r WHERE r.status IN ('SUCCESS', 'FAILED') AND "
                "(SELECT count(*) FROM webhooks_webhookevent e WHERE e.subject_id = r.refund_id "
                "AND e.event_type LIKE 'refund.%') <> 1"),
            "payments_by_status": dict(line.split("|") for line in (self.psql(
                f"SELECT status, count(*) FROM payments_payment WHERE merchant_id = {merchant} "
                "GROUP BY status ORDER BY 1") or "").splitlines()),
            "orders_with_notes": sum(1 for o in orders.values() if o.get("steps")),
            "order_notes": sorted({s for o in orders.values() for s in o.get("steps", [])})[:20],
            "5xx_total": len(fivexx),
            "5xx_outside_postgres_outage": sum(1 for c in fivexx if not during_pg_outage(c)),
            "5xx_outside_examples": [c for c in fivexx if not during_pg_outage(c)][:10],
            "unanswered_calls": sum(1 for c in calls if c[4] is None),
            "worker_kills": sum(1 for e in self.events if e["fault"] == "worker SIGKILL"),
            "worker_kills_with_attempt_in_flight": self.kills_in_flight,
            "attempts_interrupted": self.count("SELECT count(*) FROM webhooks_webhookdeliveryattempt "
                                               "WHERE outcome = 'interrupted'"),
            "postgres_down_s": [round(up - down, 1) for down, up in self.pg_down],
            "faults": self.events,
        }
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=1400)
    parser.add_argument("--rate", type=float, default=8.0)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--worker-concurrency", type=int, default=4)
    parser.add_argument("--settle", type=float, default=300, help="longest wait for the system to settle (s)")
    parser.add_argument("--json", help="also write the counts to this file")
    args = parser.parse_args()
    result = FaultRun(args).run()
    out = Path(args.json) if args.json else ROOT / "var" / "benchmarks" / "faults-last-run" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    r = result
    print()
    print(f"{r['date']}, {r['machine']}, load average after {r['load_after']}; {r['orders']} orders, "
          f"{r['calls']} API calls, {r['seconds']} s in all, settled "
          + (f"{r['settled_after_s']} s after the start" if r["settled_after_s"] is not None else "NOT within the limit"))
    print(f"faults: {r['worker_kills']} worker SIGKILLs ({r['worker_kills_with_attempt_in_flight']} with an attempt in "
          f"flight; {r['attempts_interrupted']} attempts recorded as interrupted), Redis restarted twice, "
          f"PostgreSQL crashed and restarted once (down {r['postgres_down_s']} s), receiver 500 for 15 s and "
          f"hanging for 15 s")
    rows = [
        ("events recorded", r["events_recorded"], json.dumps(r["events_by_type"])),
        ("events delivered", r["events_delivered"], ""),
        ("lost (must be 0)", r["lost"], ""),
        ("duplicate deliveries", r["duplicate_deliveries"],
         f"{r['events_delivered_more_than_once']} events; every copy had its event id, "
         f"{r['duplicates_with_differing_bodies']} with a different body"),
        ("payments created twice (must be 0)", r["payments_created_twice"], ""),
        ("refunds over the paid amount (must be 0)", r["refunds_over_paid_amount"],
         json.dumps(r["refund_outcomes_per_order"])),
        ("5xx answers outside the seconds PostgreSQL was down", r["5xx_outside_postgres_outage"],
         f"{r['5xx_total']} 5xx in all"),
        ("final statuses without exactly one event", r["final_payments_without_their_event"]
         + r["final_refunds_without_their_event"], ""),
    ]
    print("| count | value | notes |\n|---|---|---|")
    for name, value, note in rows:
        print(f"| {name} | {value} | {note} |")
    print(f"full counts: {out}")


if __name__ == "__main__":
    main()
