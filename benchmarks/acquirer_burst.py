"""A burst of S2S creations at three times Cashfree's limit for a minute (issue 28), against a
double that enforces the limit; prints one row for RESULTS.md, "A burst past Cashfree's limit".

    .venv/bin/python -m benchmarks.acquirer_burst [--limit 60] [--seconds 60]

The gateway is benchmarks/stack.py's private production-like stack (PostgreSQL, Redis,
gunicorn with sync workers) configured for Cashfree (GATEWAY_ACQUIRER=cashfree), its
CASHFREE_BASE_URL the double of benchmarks/tlsdouble.py over TLS, whose CA the gateway's
processes trust through SSL_CERT_FILE (theirs only).

The limit is scaled down from Cashfree's documented 200 a minute to `--limit` calls a minute
(60 by default), enforced by the double over every call in fixed one-minute windows, with
Cashfree's 429 and x-ratelimit-* headers. The client learns it from x-ratelimit-limit and keeps
to three quarters of it, as it would of Cashfree's own. The load is three times the limit in
creations a minute (each creation is two calls: the order, then order pay), sent at an even
rate from a pool of threads. Reported: payments created (201), refused with Retry-After
(SERVICE_UNAVAILABLE), any other answer, 5xx (must be 0), and the calls the double had to
refuse for being over its limit (must be 0).
"""
from __future__ import annotations

import argparse
import http.client
import json
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from benchmarks import bodies
from benchmarks.stack import Stack
from benchmarks.tlsdouble import TlsDouble


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60, help="the double's calls a minute")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--web-workers", type=int, default=8)
    args = parser.parse_args(argv)

    double = TlsDouble(limit_per_window=args.limit, window_seconds=60).start()
    stack = Stack(name="burst", web_workers=args.web_workers, env={
        "GATEWAY_ACQUIRER": "cashfree", "CASHFREE_BASE_URL": double.base_url,
        "CASHFREE_CLIENT_ID": "BURST1234567890", "CASHFREE_CLIENT_SECRET": "cfsk_ma_burst_secret",
        "SSL_CERT_FILE": double.ca_file})
    try:
        stack.up(worker=False, beat=False)
        creds = bodies.Credentials.from_json(json.loads(stack.manage(
            "create_merchant", "--code", "BURST", "--name", "Burst Stores", "--s2s", "--rate-limit", "100000")))
        port = stack.web_port
        count = int(3 * args.limit * args.seconds / 60)
        requests = bodies.s2s(port, creds, count, prefix="BURST")
        answers: Counter = Counter()
        lock = threading.Lock()
        calls_before = double.calls

        def send(raw: bytes) -> None:
            head, _, body = raw.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            method, target, _ = lines[0].split(" ")
            headers = dict(line.split(": ", 1) for line in lines[1:])
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                if response.status == 201:
                    kind = "created"
                elif response.status >= 500:
                    kind = "5xx"
                else:
                    code = json.loads(data or b"{}").get("errorCode", "")
                    kind = ("refused with Retry-After" if code == "SERVICE_UNAVAILABLE" and response.getheader(
                        "Retry-After") else f"other {response.status} {code}")
            except OSError as exc:
                kind = f"no answer ({type(exc).__name__})"
            finally:
                connection.close()
            with lock:
                answers[kind] += 1

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=64) as pool:
            for n, raw in enumerate(requests):
                delay = started + n * args.seconds / count - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(send, raw)
            sent_in = time.monotonic() - started
        answered_in = time.monotonic() - started
        print(f"limit {args.limit} calls/min at the double (Cashfree's 200 scaled), {count} creations "
              f"sent in {sent_in:.0f} s ({count / sent_in * 60:.0f}/min, 3x the limit), the last answered "
              f"after {answered_in:.0f} s; {args.web_workers} sync web workers")
        print("| sent | created | refused with Retry-After | other | 5xx | calls at the double | "
              "over the limit at the double |")
        print("|---|---|---|---|---|---|---|")
        other = sum(n for kind, n in answers.items()
                    if kind not in ("created", "refused with Retry-After", "5xx"))
        print(f"| {count} | {answers['created']} | {answers['refused with Retry-After']} | {other} | "
              f"{answers['5xx']} | {double.calls - calls_before} | {double.refused} |")
        if other:
            print("other answers:", dict(answers))
    finally:
        stack.close()
        double.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
