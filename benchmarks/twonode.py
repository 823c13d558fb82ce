"""benchmarks/twonode: what one payment costs on the deployment recipe, for docs/operations.md's sizing.

The two-node harness of the tests (tests/support/deploy.py: deploy/'s HAProxy with TLS, two web
nodes, two workers, one beat, PgBouncer in transaction mode) on a private PostgreSQL and Redis
(benchmarks/stack.py). A payment is what a merchant's S2S UPI payment makes the system do: the
creation and the customer's payment through the balancer (two HTTPS requests), the approval task
and the signed webhook to the merchant's receiver (two tasks on the workers). Payments start at a
fixed rate for a fixed time; then the run waits for every webhook and prints, per process kind,
the CPU seconds per payment and per 100 payments/s, memory, PgBouncer's busiest pool, and the
creation's latency.

Usage: benchmarks/twonode [--rate 10] [--seconds 30] [--web-workers 2] [--json FILE]
       benchmarks/twonode --create-only --warm-seconds 20 --rate 150 --seconds 30   # issue 30's tail
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import psycopg

from benchmarks.bodies import Credentials, raw, s2s_body, write
from benchmarks.openloop import percentile
from benchmarks.stack import PYTHON, ROOT, Stack, children, cpu_seconds, rss_kib
from tests.support.deploy import Cluster
from tests.support.waiting import wait_until

PORTS = {"pg_port": 5443, "redis_port": 6393, "web_port": 8398}
RECEIVER_PORT = 8399


def tree(pid: int) -> list[int]:
    found = [pid]
    for child in children(pid):
        found += tree(child)
    return found


def cpu_of(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except (OSError, IndexError):
            pass
    return total


def rss_of(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += rss_kib(pid)
        except OSError:
            pass
    return total


class Run:
    def __init__(self, args):
        self.args = args
        self.latencies: list[float] = []
        self.lateness: list[float] = []  # the generator's own: scheduled to the request's start
        self.statuses: dict = {}
        self.lock = threading.Lock()
        self.admin: psycopg.Connection | None = None  # PgBouncer's admin console (pools())

    def groups(self) -> dict[str, list[int]]:
        c = self.cluster
        postmaster = int((self.stack._pg_data / "postmaster.pid").read_text().split()[0])
        return {
            "web (2 nodes)": [p for n in c.nodes for p in tree(n.process.pid)],
            "worker (2)": [p for w in c.workers for p in tree(w.process.pid)],
            "beat": tree(c.beat.process.pid),
            "haproxy": tree(c.balancer.process.pid),
            "pgbouncer": tree(c.bouncer.process.pid),
            "postgresql": tree(postmaster),
            "redis": tree(self.stack.procs["redis"].pid),
        }

    def pools(self) -> tuple[int, int, int]:
        """(client connections active, server connections active, server connections in all) now,
        from PgBouncer's admin console on one connection kept open: a psql started for each
        sample cost 33 ms of CPU (its start and a SCRAM login), twice a second, on the cores the
        gateway was being measured on."""
        if self.admin is None:
            # The admin console speaks only the simple query protocol: ClientCursor sends that.
            self.admin = psycopg.connect(host="127.0.0.1", port=self.cluster.bouncer.port, user="postgres",
                                         password="postgres", dbname="pgbouncer", autocommit=True,
                                         cursor_factory=psycopg.ClientCursor)
        cursor = self.admin.execute("SHOW POOLS")
        names = [column.name for column in cursor.description]
        for row in cursor.fetchall():
            pool = dict(zip(names, row))
            if pool["database"] == "gateway":
                return pool["cl_active"], pool["sv_active"], pool["sv_active"] + pool["sv_idle"] + pool["sv_used"]
        return 0, 0, 0

    def post(self, context: ssl.SSLContext, path: str, body: dict, headers: dict | None = None) -> tuple[int, bytes]:
        """One POST through the balancer on a new TLS connection, as a merchant's backend makes it."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.cluster.balancer.https_port, timeout=30, context=context)
        try:
            conn.request("POST", path, body=json.dumps(body).encode(),
                         headers={"Content-Type": "application/json", **(headers or {})})
            answer = conn.getresponse()
            return answer.status, answer.read()
        finally:
            conn.close()

    def create(self, context: ssl.SSLContext, txn: str) -> tuple[int, bytes]:
        return self.post(context, "/api/v2/payments/s2s", s2s_body(self.creds, txn, int(time.time())),
                         {"X-Api-Key": self.creds.api_key, "X-Merchant-Id": self.creds.code})

    def payment(self, i: int, scheduled: float, context: ssl.SSLContext) -> None:
        with self.lock:
            self.lateness.append(time.monotonic() - scheduled)
        status = None
        try:
            status, answer = self.create(context, f"TN{os.getpid()}X{i:06d}")
            with self.lock:
                self.latencies.append(time.monotonic() - scheduled)
            if status == 201:
                status, _ = self.post(context, "/sandbox/upi/pay", {"upiUri": json.loads(answer)["upiQrString"],
                                                                     "payerVpa": "success@sandbox"})
        except Exception as exc:  # noqa: BLE001 - counted, not raised
            status = type(exc).__name__
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def fixed_threads(self, total: int) -> dict:
        """The fixed-rate phase of whole payments: each creation, then the customer's payment with
        the QR string it answered, from a pool of threads (http.client, a new TLS connection per
        request); the phase ends when every webhook has arrived."""
        args, context = self.args, self.cluster.balancer.ssl_context()
        start, generator_cpu = time.monotonic(), time.process_time()
        with ThreadPoolExecutor(max_workers=64) as pool:
            for i in range(total):
                scheduled = start + i / args.rate
                delay = scheduled - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(self.payment, i, scheduled, context)
        sent_for = time.monotonic() - start
        wait_until(lambda: self.delivered() >= total, 300, "not every webhook arrived")
        return {
            "generator": "threads (http.client)", "sent_for": sent_for, "settled_after": time.monotonic() - start,
            "generator_cpu": time.process_time() - generator_cpu,
            "answers": {str(k): v for k, v in self.statuses.items()},
            "latency_ms": {f"p{p}": 1000 * percentile(self.latencies, p) for p in (50, 90, 99, 100)},
            "lateness_ms": {f"p{p}": 1000 * percentile(self.lateness, p) for p in (50, 99, 100)},
        }

    def fixed_open_loop(self, total: int) -> dict:
        """The fixed-rate phase of creations alone, sent by benchmarks/openloop.py in a process of
        its own: one thread on epoll, requests signed before the clock starts, a new TLS
        connection with a full handshake for each, latency from the scheduled time. A pool of
        Python threads doing the same cost 1.5 to 2.0 ms of CPU a creation on the cores the
        gateway uses, and a thread could wait for another's GIL between its answer and its
        timestamp."""
        args, balancer = self.args, self.cluster.balancer
        now, folder = int(time.time()), self.stack.dir
        requests = [raw("POST", "/api/v2/payments/s2s", port=balancer.https_port, headers={
            "X-Api-Key": self.creds.api_key, "X-Merchant-Id": self.creds.code, "Content-Type": "application/json"},
            body=json.dumps(s2s_body(self.creds, f"TN{os.getpid()}X{i:06d}", now)).encode()) for i in range(total)]
        out = folder / "fixed.json"
        start = time.monotonic()
        subprocess.run([str(PYTHON), "-m", "benchmarks.openloop", "--port", str(balancer.https_port),
                        "--rate", str(args.rate), "--duration", str(total / args.rate),
                        "--requests", str(write(folder / "fixed.requests", requests)),
                        "--tls-ca", str(balancer.certificate), "--out", str(out)], check=True, cwd=ROOT)
        result = json.loads(out.read_text())
        return {
            "generator": "benchmarks/openloop.py over TLS", "sent_for": total / result["achieved_send_rate"],
            "settled_after": time.monotonic() - start, "generator_cpu": result["cpu_seconds"],
            "answers": {**result["statuses"], **result["errors"]},
            "latency_ms": {"p50": result["p50_ms"], "p90": result["p90_ms"], "p99": result["p99_ms"],
                           "p100": result["max_ms"]},
            "lateness_ms": {"p50": result["lateness_p50_ms"], "p99": result["lateness_p99_ms"],
                            "p100": result["lateness_max_ms"]},
        }

    def warm(self, context: ssl.SSLContext) -> dict:
        """A throughput run first, as a real day has one before its quiet hour: creations as fast
        as 8 clients get them answered for --warm-seconds (their latency is not counted); the
        fixed-rate phase then runs on the rows, dead tuples and WAL it left."""
        stop_at, answered = time.monotonic() + self.args.warm_seconds, [0]

        def client(k: int) -> None:
            i = 0
            while time.monotonic() < stop_at:
                created = self.create(context, f"TW{os.getpid()}C{k}X{i:07d}")[0] == 201
                with self.lock:
                    answered[0] += created
                i += 1

        began = time.monotonic()
        threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return {"seconds": self.args.warm_seconds, "created": answered[0],
                "per_s": round(answered[0] / (time.monotonic() - began), 1)}

    def balancer_timers(self, count: int) -> dict:
        """Where the fixed-rate creations spent their time, from HAProxy's own log (option
        httplog: TR/Tw/Tc/Tr/Ta per request) for the last `count` creations: Tw waiting in the
        balancer's queue for a worker, Tr the node's answer (gunicorn and the gateway), Ta the
        whole request inside the balancer. What the client saw beyond Ta is its TCP and TLS
        handshake and its own scheduling."""
        timers = {"Tw": [], "Tr": [], "Ta": []}
        lines = [line for line in self.cluster.balancer.log_text().splitlines() if "/api/v2/payments/s2s" in line]
        for line in lines[-count:]:
            match = re.search(r" (-?\d+)/(-?\d+)/(-?\d+)/(-?\d+)/(-?\d+) \d{3} ", line)
            if match:
                _, tw, _, tr, ta = (int(v) for v in match.groups())
                timers["Tw"].append(tw)
                timers["Tr"].append(tr)
                timers["Ta"].append(ta)
        return {name: {f"p{p}": percentile(values, p) for p in (50, 90, 99, 100)} for name, values in timers.items()
                if values}

    def delivered(self) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", RECEIVER_PORT, timeout=10)
        conn.request("GET", "/_stats")
        stats = json.loads(conn.getresponse().read())
        conn.close()
        return stats["events_acknowledged"]

    def run(self) -> dict:
        args = self.args
        self.stack = Stack(name="twonode", **PORTS)
        self.stack._spawn("receiver", [PYTHON, "-m", "benchmarks.receiver", "--port", str(RECEIVER_PORT)])
        try:
            self.stack.postgres_init()
            self.stack.redis_start()
            self.stack.manage("migrate", "--noinput")
            self.creds = Credentials.from_json(json.loads(self.stack.manage(
                "create_merchant", "--code", "TWONODE", "--name", "Two Node Stores", "--s2s", "--rate-limit",
                "100000", "--webhook-url", f"http://127.0.0.1:{RECEIVER_PORT}/webhook")))
            self.cluster = Cluster(self.stack.database_url, self.stack.redis_url, web_workers=args.web_workers,
                                   worker_concurrency=args.worker_concurrency,
                                   env={"SANDBOX_UPI_SUCCESS_DELAY_SECONDS": "1", "LOG_LEVEL": "WARNING"})
            self.cluster.start()
            context = self.cluster.balancer.ssl_context()
            total = int(args.rate * args.seconds)
            warm = self.warm(context) if args.warm_seconds else None  # its CPU is not counted
            groups = self.groups()
            before = {name: cpu_of(pids) for name, pids in groups.items()}
            peak = [0, 0, 0]
            stop = threading.Event()

            def sample():
                while not stop.is_set():
                    now = self.pools()
                    for k in range(3):
                        peak[k] = max(peak[k], now[k])
                    time.sleep(0.5)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            if args.create_only:
                fixed = self.fixed_open_loop(total)
            else:
                fixed = self.fixed_threads(total)
            stop.set()
            groups = self.groups()  # gunicorn and Celery may have replaced a child meanwhile
            after = {name: cpu_of(pids) for name, pids in groups.items()}
            memory = {name: round(rss_of(pids) / 1024) for name, pids in groups.items()}
            cpu = {name: after[name] - before.get(name, 0) for name in after}
            result = {
                "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()}",
                "rate": args.rate, "seconds": args.seconds, "payments": total,
                "sent_for_s": round(fixed["sent_for"], 1), "settled_after_s": round(fixed["settled_after"], 1),
                "answers": fixed["answers"],
                "web_workers_per_node": args.web_workers, "worker_concurrency": args.worker_concurrency,
                "cpu_ms_per_payment": {name: round(1000 * seconds / total, 2) for name, seconds in cpu.items()},
                # The load generator's own (TLS handshakes): not the gateway's, but the same cores.
                "generator": fixed["generator"],
                "generator_cpu_ms_per_payment": round(1000 * fixed["generator_cpu"] / total, 2),
                "cores_per_100_payments_s": {name: round(seconds / total * 100, 2) for name, seconds in cpu.items()},
                "rss_mib": memory,
                "pgbouncer_peak": {"client_active": peak[0], "server_active": peak[1], "server_open": peak[2]},
                "creation_latency_ms": {name: round(value, 1) for name, value in fixed["latency_ms"].items()},
                "generator_lateness_ms": {name: round(value, 1) for name, value in fixed["lateness_ms"].items()},
                "at_the_balancer_ms": self.balancer_timers(total),
                "creation_p99_over_p50": round(fixed["latency_ms"]["p99"] / fixed["latency_ms"]["p50"], 2),
                "after_throughput_run": warm,
            }
            return result
        finally:
            if self.admin is not None:
                self.admin.close()
            if getattr(self, "cluster", None):
                self.cluster.close()
            self.stack.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=10.0, help="payments started per second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--create-only", action="store_true",
                        help="creations only (the tail of issue 30 at 150/s): no customer payment, no webhook")
    parser.add_argument("--warm-seconds", type=float, default=0,
                        help="a throughput run of creations this long before the fixed-rate phase")
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args()
    result = Run(args).run()
    text = json.dumps(result, indent=1)
    if args.json:
        Path(args.json).write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
