"""What the settlement benchmarks (benchmarks/reconcile.py, benchmarks/console_settlements.py)
share: their command line, the private PostgreSQL and Redis they run in (benchmarks/stack.py),
and the month they start from (benchmarks/settlement_month.py, each fault injected ten times,
migrated and ANALYZEd). The outer process brings the stack up and runs the module again with
--inner, against it; only the inner one sets Django up."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
FAULTS = {"not_settled": 10, "settled_twice": 10, "amount_mismatch": 10, "fee_mismatch": 10, "tax_not_gst": 10,
          "refund_mismatch": 10, "unknown_reference": 10, "bank_unmatched": 10, "unbalanced": 10}
SIZES = ("payments", "merchants", "days", "chargebacks")


def generated_month(args, *, seed: int):
    """Migrate, write the month (its size from the command line, FAULTS injected) and ANALYZE:
    (the month, the seconds writing it took). Call it in the inner process, after django.setup()."""
    from django.core.management import call_command
    from django.db import connection

    from benchmarks.settlement_month import month_generate

    call_command("migrate", verbosity=0)
    began = time.perf_counter()
    month = month_generate(payments=args.payments, merchants=args.merchants, days=args.days,
                           chargebacks=args.chargebacks, faults=FAULTS, seed=seed)
    generated = time.perf_counter() - began
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return month, generated


def _outer(args, *, name: str, module: str, title: str) -> int:
    from benchmarks.stack import Stack

    stack = Stack(name=name, pg_port=args.pg_port, redis_port=args.redis_port, web_port=args.web_port)
    try:
        stack.postgres_init()
        stack.redis_start()
        print(f"{title}: {args.payments} payments, {args.merchants} merchants x {args.days} days of settlements; "
              f"{os.cpu_count()} cores; PostgreSQL on port {args.pg_port}", flush=True)
        command = [sys.executable, "-m", module, "--inner"]
        for size in SIZES:
            command += [f"--{size}", str(getattr(args, size))]
        return subprocess.run(command, cwd=ROOT, env=stack.env()).returncode
    finally:
        stack.close()


def main(inner: Callable, *, description: str, name: str, module: str, title: str,
         ports: tuple[int, int, int]) -> int:
    """The benchmark's command line: --inner runs `inner(args)` here; without it, a private
    stack on `ports` (PostgreSQL, Redis, web) runs `module` with --inner."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--merchants", type=int, default=100)
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--chargebacks", type=int, default=50)
    parser.add_argument("--pg-port", type=int, default=ports[0])
    parser.add_argument("--redis-port", type=int, default=ports[1])
    parser.add_argument("--web-port", type=int, default=ports[2])
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args)
        return 0
    return _outer(args, name=name, module=module, title=title)
