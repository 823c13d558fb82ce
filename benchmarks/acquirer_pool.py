"""Cashfree calls per second and their p99, against a local TLS double (issue 28: connections
that are reused). Prints one table row per load; the figures of record are in RESULTS.md,
"Cashfree's connections".

    .venv/bin/python -m benchmarks.acquirer_pool [--calls 2000] [--threads 1,4]

Each call is the client's whole public path (`CashfreeClient.get_order`): the account's
outbound limit in the cache (raised out of the way here, but still asked), the request, the
answer read and parsed. The double (benchmarks/tlsdouble.py) answers at once over TLS with a
certificate made at start; this process alone trusts its CA (SSL_CERT_FILE). The cache is
Django's local-memory one unless REDIS_URL is set, so the figure is the transport's.

To measure the client as it was before the pool (a new TLS connection per call), run the same
file from a checkout of that commit with these two files copied in (RESULTS.md says which).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gateway.settings")
    os.environ.setdefault("GATEWAY_ENV", "staging")
    import logging

    import django

    django.setup()
    logging.getLogger("payments.acquirer.cashfree.client").setLevel(logging.WARNING)  # a line a call


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def run(calls: int, threads: int, base_url: str) -> dict:
    from payments.acquirer.cashfree.client import CashfreeClient

    client = CashfreeClient(base_url=base_url, client_id="BENCH1234567890", client_secret="cfsk_ma_bench_secret",
                            timeout=10)
    client.calls_per_minute = 10 ** 9  # the shared limit is asked, but never the bottleneck here
    for _ in range(threads):  # warm: the first connection of each thread is not the figure
        client.get_order("order_warm")
    latencies: list[float] = []
    lock = threading.Lock()
    per_thread = calls // threads

    def worker() -> None:
        mine = []
        for n in range(per_thread):
            started = time.perf_counter()
            client.get_order(f"order_{n}")
            mine.append(time.perf_counter() - started)
        with lock:
            latencies.extend(mine)

    started = time.perf_counter()
    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    elapsed = time.perf_counter() - started
    return {"threads": threads, "calls": len(latencies), "per_second": len(latencies) / elapsed,
            "p50_ms": statistics.median(latencies) * 1000, "p99_ms": _percentile(latencies, 0.99) * 1000}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--threads", default="1,4")
    args = parser.parse_args(argv)
    from benchmarks.tlsdouble import TlsDouble

    double = TlsDouble().start()
    os.environ["SSL_CERT_FILE"] = double.ca_file  # this process only: trust the double's CA
    _setup()
    try:
        print("| threads | calls | calls/s | p50 ms | p99 ms | TLS connections opened |")
        print("|---|---|---|---|---|---|")
        for threads in (int(n) for n in args.threads.split(",")):
            opened = double.connections
            row = run(args.calls, threads, double.base_url)
            print(f"| {row['threads']} | {row['calls']} | {row['per_second']:.0f} | {row['p50_ms']:.2f} | "
                  f"{row['p99_ms']:.2f} | {double.connections - opened} |", flush=True)
    finally:
        double.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
