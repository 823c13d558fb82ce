"""benchmarks/compare: before/after of a change, measured side by side on this noisy machine.

    benchmarks/compare [--rev HEAD] [--rounds 4] [--seconds 4] [--only enquiry,s2s] [--drain 2000] [--expiry 20000]

Two private stacks run at once: A on revision REV (exported with `git archive`, with this
checkout's benchmarks/ laid over it so the harness is the same) and B on this working tree.
Their phases alternate, A then B then B then A, so that whatever else the machine is doing
falls on both. For each endpoint it prints the median throughput, the ratio to each stack's
own bare endpoint, and the CPU spent per request by gunicorn, PostgreSQL, Redis and Celery
together, which the machine's other load disturbs least. Optionally it also times a webhook
drain and an expiry sweep on each.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks import bodies
from benchmarks.bench import CpuMeter, median
from benchmarks.stack import PYTHON, ROOT, Stack, wait_until

ENDPOINTS = ("bare", "enquiry", "s2s", "hosted")


class Side:
    def __init__(self, label: str, code_dir: Path, offset: int, args, web_workers: int):
        self.label = label
        self.receiver_port = 8410 + offset
        self.stack = Stack(name=f"cmp{label}", pg_port=5450 + offset, redis_port=6400 + offset,
                           web_port=8400 + offset, web_workers=web_workers,
                           worker_concurrency=args.worker_concurrency, code_dir=code_dir)
        self.stack._spawn("receiver", [PYTHON, "-m", "benchmarks.receiver", "--port", str(self.receiver_port)])
        self.stack.up()
        self.cpu = CpuMeter(self.stack)
        hook = f"http://127.0.0.1:{self.receiver_port}/webhook"
        self.creds = bodies.Credentials.from_json(json.loads(self.stack.manage(
            "create_merchant", "--code", "BENCH", "--name", "Bench Stores", "--s2s", "--rate-limit", "100000",
            "--webhook-url", hook)))
        self.stack.manage("create_merchant", "--code", "EXPIRY", "--name", "Expiry Stores", "--rate-limit", "100000")
        self.txns = self.op("seed-enquiry", "BENCH", "1000")["merchant_txn_ids"]
        self.results: dict[str, list] = {name: [] for name in ENDPOINTS}

    def op(self, *args: str) -> dict:
        out = subprocess.run([PYTHON, "-m", "benchmarks.ops", *args], cwd=self.stack.code_dir, env=self.stack.env(),
                             check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    def requests(self, name: str, tag: str, count: int) -> list[bytes]:
        port = self.stack.web_port
        if name == "bare":
            return bodies.bare(port)
        if name == "enquiry":
            return bodies.enquiry(port, self.creds, self.txns)
        if name == "s2s":
            return bodies.s2s(port, self.creds, count, prefix=f"S{tag}-")
        return bodies.hosted(port, self.creds, count, prefix=f"H{tag}-")

    def wrk(self, name: str, tag: str, args, work: Path) -> None:
        path = bodies.write(work / f"{self.label}-{name}.req", self.requests(name, tag, int(2000 * args.seconds)))
        before = self.cpu.snapshot()
        out = subprocess.run(["wrk", "-t1", f"-c{args.connections}", f"-d{args.seconds}s", "--timeout", "10s",
                              "-s", str(ROOT / "benchmarks/wrk.lua"), self.stack.base_url, "--", str(path)],
                             capture_output=True, text=True, check=True)
        after = self.cpu.snapshot()
        result = json.loads(out.stdout.split("WRKJSON ", 1)[1])
        ok = result["requests"] - result["non2xx"]
        requests = max(result["requests"], 1)
        per_process = {k: 1000 * (after[k] - before[k]) / requests for k in after if not k.startswith("_")}
        self.results[name].append({"ok_per_s": ok / (result["duration_us"] / 1e6),
                                   "cpu_ms": 1000 * CpuMeter.server_seconds(before, after) / requests,
                                   "per_process": per_process, "non2xx": result["non2xx"]})

    def receiver_stats(self) -> dict:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.receiver_port}/_stats", timeout=10) as r:
            return json.loads(r.read())

    def drain(self, count: int, tag: str) -> dict:
        before = self.receiver_stats()["events_acknowledged"]
        cpu0 = self.cpu.snapshot()
        t0 = self.op("drain", "BENCH", str(count), tag)["t0"]
        try:
            wait_until(lambda: self.receiver_stats()["events_acknowledged"] - before >= count, 300,
                       "the drain", interval=0.25)
        except RuntimeError:
            pass
        seconds = time.time() - t0
        got = self.receiver_stats()["events_acknowledged"] - before
        spent = sum(v - cpu0[k] for k, v in self.cpu.snapshot().items() if not k.startswith("_"))
        return {"delivered": got, "seconds": seconds, "per_s": got / seconds, "cpu_ms": 1000 * spent / max(got, 1)}

    def expiry(self, count: int) -> dict:
        info = self.op("expiry", "EXPIRY", str(count))
        t0, pk = info["t0"], info["merchant_pk"]
        n = 0
        while time.time() - t0 < 300:
            n = int(self.stack.psql(f"SELECT count(*) FROM payments_payment WHERE merchant_id = {pk} "
                                    f"AND status = 'EXPIRED'"))
            if n >= count:
                break
            time.sleep(0.5)
        return {"expired": n, "seconds": time.time() - t0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--only", default=",".join(ENDPOINTS))
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--b-web-workers", type=int, help="gunicorn workers of B, to compare configurations")
    parser.add_argument("--worker-concurrency", type=int, default=4)
    parser.add_argument("--files", help="B is REV plus these files (comma-separated) from the working tree, "
                                         "instead of the whole working tree: one change measured on its own")
    parser.add_argument("--drain", type=int, default=0, help="also time a drain of this many webhook events")
    parser.add_argument("--expiry", type=int, default=0, help="also time the expiry of this many sessions")
    args = parser.parse_args()
    endpoints = [e for e in ENDPOINTS if e in args.only.split(",") or e == "bare"]

    work = Path(tempfile.mkdtemp(prefix="gw-compare-"))
    old = work / "old"
    old.mkdir()
    archive = subprocess.run(["git", "archive", args.rev], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    shutil.rmtree(old / "benchmarks", ignore_errors=True)
    shutil.copytree(ROOT / "benchmarks", old / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    new = ROOT
    if args.files:
        new = work / "new"
        shutil.copytree(old, new)
        for name in args.files.split(","):
            source, target = ROOT / name, new / name
            if source.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target)
            else:
                target.unlink(missing_ok=True)
    sides = []
    try:
        sides = [Side("A", old, 1, args, args.web_workers),
                 Side("B", new, 2, args, args.b_web_workers or args.web_workers)]
        for r in range(args.rounds):
            order = sides if r % 2 == 0 else sides[::-1]
            for name in endpoints:
                for side in order:
                    side.wrk(name, f"{r}", args, work)
        extra = {}
        if args.drain:
            for r in range(2):
                for side in (sides if r % 2 == 0 else sides[::-1]):
                    extra.setdefault(f"drain {args.drain}", {}).setdefault(side.label, []).append(
                        side.drain(args.drain, f"C{r}-"))
        if args.expiry:
            for side in sides:
                extra.setdefault(f"expiry {args.expiry}", {})[side.label] = [side.expiry(args.expiry)]
    finally:
        for side in sides:
            side.stack.close()
        shutil.rmtree(work, ignore_errors=True)

    print(f"A = {args.rev}, B = {'A + ' + args.files if args.files else 'working tree'}; "
          f"{args.rounds} rounds of {args.seconds} s, alternating")
    print(f"{'endpoint':10} {'A req/s':>9} {'B req/s':>9} {'A ratio':>8} {'B ratio':>8} {'A cpu ms':>9} {'B cpu ms':>9}  change")
    for name in endpoints:
        row = []
        for side in sides:
            rounds = side.results[name]
            bare = side.results["bare"]
            row.append((median([x["ok_per_s"] for x in rounds]),
                        median([x["ok_per_s"] / b["ok_per_s"] for x, b in zip(rounds, bare)]),
                        median([x["cpu_ms"] for x in rounds])))
        (a_tput, a_ratio, a_cpu), (b_tput, b_ratio, b_cpu) = row
        print(f"{name:10} {a_tput:9.0f} {b_tput:9.0f} {a_ratio:8.3f} {b_ratio:8.3f} {a_cpu:9.2f} {b_cpu:9.2f}  "
              f"ratio x{b_ratio / a_ratio:.2f}, cpu/request {100 * (b_cpu - a_cpu) / a_cpu:+.0f}%")
    print("\nCPU ms per request by process (median of rounds); loadgen is wrk, not counted above")
    for name in endpoints:
        for side in sides:
            rounds = side.results[name]
            groups = sorted(rounds[0]["per_process"])
            print(f"{name:10} {side.label}: " + "  ".join(
                f"{g} {median([r['per_process'][g] for r in rounds]):.2f}" for g in groups))
    for what, by_side in extra.items():
        for label, runs in by_side.items():
            print(f"{what} {label}: " + "; ".join(json.dumps({k: round(v, 2) for k, v in run.items()}) for run in runs))


if __name__ == "__main__":
    main()
