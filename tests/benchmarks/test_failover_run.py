"""The failover fault run (issue 33, benchmarks/failover_run.py), short: 70 s at 10 S2S UPI
payments a second on a merchant routed "UPI: razorpay,cashfree", Razorpay's double failing in
each of the four ways (dropped connections, answers past the client's timeout, 500s, 429s) from
21 s to 42 s. The issue's own run is 10 minutes at 20/s, ten times (benchmarks/RESULTS.md); this
one holds the same promises on every commit, except the return to rotation, which a 28 s tail
cannot always show (a probe is let through every 30 s).

The script runs as its own process, as an operator runs it, on a database of its own beside
the test's (its Django test set-up creates and drops `test_<name>`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _beside(url: str, suffix: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix))


@pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="the run writes from 8 threads at once and creates a database beside the test's: "
                           "PostgreSQL only (scripts/test always gives it one)")
def test_payments_fail_over_once_and_nothing_is_charged_twice(tmp_path):
    out = tmp_path / "failover.json"
    redis = urlsplit(os.environ["REDIS_URL"])
    env = {**os.environ, "GATEWAY_ENV": "staging", "LOG_LEVEL": "WARNING",
           "DATABASE_URL": _beside(os.environ["DATABASE_URL"], "_failover"),
           # A Redis database no test area uses (scripts/test gives areas 6 to 15): the run
           # clears its cache at the start.
           "REDIS_URL": urlunsplit(redis._replace(path="/5"))}
    subprocess.run([sys.executable, "benchmarks/failover_run.py", "--seconds", "70", "--rate", "10",
                    "--json", str(out)], cwd=ROOT, env=env, check=True, timeout=600,
                   stdout=subprocess.DEVNULL)
    figures = json.loads(out.read_text())

    assert figures["created_answers"] == 700
    # Razorpay failed technically for a stretch, and every payment it failed before any
    # customer step was created on Cashfree instead (the issue asks at least 99%).
    assert figures["first_acquirer_failed_technically"] > 0
    assert figures["failover_success_pct"] >= 99
    assert figures["customer_visible_failure_pct"] <= 1
    # Each payment captured once, at the acquirer the gateway sent it to, by both doubles' ledgers.
    assert figures["charged_twice_or_misplaced"] == 0
    # Out of rotation within 30 s of the trouble starting.
    assert figures["left_rotation_after_s"] is not None and figures["left_rotation_after_s"] <= 30
    assert figures["double_schema_violations"] == 0
