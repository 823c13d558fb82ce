"""Where one request's CPU goes, in-process: the WSGI application called directly (no
gunicorn, no network), on a real PostgreSQL and Redis, so Python's share of a request can be
read apart from the database's.

    .venv/bin/python -m benchmarks.profile [--only bare,enquiry,s2s,hosted] [-n 2000] [--top 30]
                                           [--sort tottime|cumulative]

It uses the database and Redis named by PROFILE_DATABASE_URL (default a `gw_profile` database
on 127.0.0.1:5432) and PROFILE_REDIS_URL (default Redis database 6 on 127.0.0.1:6379), migrates
it, makes a merchant, then for each request kind prints the CPU per request of this process
and of its PostgreSQL backend and of Redis (read from /proc; median of 5 batches), and the
functions with the most CPU time under cProfile (a CPU clock, so waiting is not counted).
Celery messages go to that Redis and are deleted at the end (no worker is needed).

Use it to find where the time goes; judge a change with benchmarks/compare, which runs the
real stack side by side: on a shared machine these in-process figures move by a third from
one run to the next.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time


def _environ(raw: bytes) -> dict:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    method, target, _ = lines[0].split(" ")
    path, _, query = target.partition("?")
    environ = {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr,
        "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
    }
    for line in lines[1:]:
        name, _, value = line.partition(": ")
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            environ[key] = value
        else:
            environ["HTTP_" + key] = value
    return environ


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="bare,enquiry,s2s,hosted")
    parser.add_argument("-n", type=int, default=2000, help="requests per kind to time")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime", help="pstats order: tottime or cumulative")
    args = parser.parse_args()

    os.environ["DATABASE_URL"] = os.environ.get(
        "PROFILE_DATABASE_URL", "postgres://postgres:postgres@127.0.0.1:5432/gw_profile")
    os.environ["REDIS_URL"] = os.environ.get("PROFILE_REDIS_URL", "redis://127.0.0.1:6379/6")
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    os.environ.setdefault("GATEWAY_ENV", "staging")
    os.environ.setdefault("LOG_LEVEL", "WARNING")

    import django
    from django.core.management import call_command

    import psycopg

    url = os.environ["DATABASE_URL"]
    admin_url, _, name = url.rpartition("/")
    with psycopg.connect(admin_url + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    django.setup()
    call_command("migrate", verbosity=0)

    from django.core.wsgi import get_wsgi_application

    from benchmarks import bodies, ops
    from gateway.platform.services import merchant_create

    from gateway.platform.services import RATE_LIMIT_MAX

    created = merchant_create(code=f"PROF{int(time.time())}", name="Profile Shop", s2s_enabled=True,
                              rate_limit=RATE_LIMIT_MAX)
    creds = bodies.Credentials(created.merchantId, created.apiKey, created.secretKey)
    app = get_wsgi_application()
    kinds = args.only.split(",")
    run_tag = str(int(time.time()))[-6:]

    def request_set(kind: str, count: int, tag: str) -> list[bytes]:
        if kind == "bare":
            return bodies.bare(8000) * count
        if kind == "enquiry":
            txns = ops.seed_enquiry(creds.code, 200)["merchant_txn_ids"] if not enquiry_txns else enquiry_txns
            enquiry_txns[:] = txns
            return (bodies.enquiry(8000, creds, txns) * (count // len(txns) + 1))[:count]
        if kind == "s2s":
            return bodies.s2s(8000, creds, count, prefix=f"P{run_tag}{tag}")
        return bodies.hosted(8000, creds, count, prefix=f"H{run_tag}{tag}")

    enquiry_txns: list[str] = []
    statuses: dict[str, int] = {}

    def start_response(status, headers, exc_info=None):
        statuses[status] = statuses.get(status, 0) + 1

    import redis
    from django.db import connection

    redis_client = redis.Redis.from_url(os.environ["REDIS_URL"])
    redis_pid = int(redis_client.info("server")["process_id"])

    def server_cpu() -> tuple[float, float]:
        """CPU seconds so far of this process's PostgreSQL backend and of Redis (same machine)."""
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
        return _cpu_seconds(backend), _cpu_seconds(redis_pid)

    def call(raw: bytes) -> None:
        for _ in app(_environ(raw), start_response):
            pass

    for kind in kinds:
        warm = request_set(kind, 200, "w")
        for raw in warm:
            call(raw)
        batches, pg_ms, redis_ms = [], [], []
        per_batch = max(1, args.n // 5)
        for b in range(5):
            reqs = request_set(kind, per_batch, f"b{b}")
            pg0, redis0 = server_cpu()
            start = time.process_time()
            for raw in reqs:
                call(raw)
            batches.append((time.process_time() - start) / per_batch * 1000)
            pg1, redis1 = server_cpu()
            pg_ms.append((pg1 - pg0) / per_batch * 1000)
            redis_ms.append((redis1 - redis0) / per_batch * 1000)
        reqs = request_set(kind, per_batch, "p")
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for raw in reqs:
            call(raw)
        profiler.disable()
        print(f"\n=== {kind}: {statistics.median(batches):.3f} ms CPU per request in this process "
              f"(batches {', '.join(f'{x:.3f}' for x in batches)}); PostgreSQL backend "
              f"{statistics.median(pg_ms):.3f} ms, Redis {statistics.median(redis_ms):.3f} ms; statuses {statuses}")
        statuses.clear()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).sort_stats(args.sort)
        stats.print_stats(args.top)
        print("\n".join(out.getvalue().splitlines()[4:]))

    redis_client.flushdb()


if __name__ == "__main__":
    main()
