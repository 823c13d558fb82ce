"""An open-loop load generator: requests leave at fixed intervals whatever the server does,
and each latency is measured from the time the request was SCHEDULED, not sent, so a slow
server cannot hide its queue (no coordinated omission, as wrk2 does it).

    python -m benchmarks.openloop --port 8391 --rate 150 --duration 10 --requests FILE --out result.json

FILE is the NUL-separated raw requests of benchmarks/bodies.py, sent in order, each once
(wrapping if the file is shorter than rate x duration). Every request has a connection of its
own, as gunicorn's sync workers close the connection after each answer anyway. The result
says how late the generator itself sent (`lateness_*`) and the CPU it used, to show it was not
the bottleneck.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import resource
import time


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    # Nearest rank: the smallest value with at least p% of the values at or below it.
    k = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[k]


async def _one(port: int, raw: bytes, scheduled: float, timeout: float, out: dict) -> None:
    loop = asyncio.get_running_loop()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
        try:
            writer.write(raw)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
            status = int(head.split(b" ", 2)[1])
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:].strip())
            if length:
                await asyncio.wait_for(reader.readexactly(length), timeout)
            done = loop.time()
        finally:
            writer.close()
    except Exception as exc:  # noqa: BLE001 - every failure is counted, by kind
        out["errors"][type(exc).__name__] = out["errors"].get(type(exc).__name__, 0) + 1
        return
    out["latencies"].append(done - scheduled)
    out["statuses"][status] = out["statuses"].get(status, 0) + 1


async def run(port: int, rate: float, duration: float, requests: list[bytes], timeout: float) -> dict:
    loop = asyncio.get_running_loop()
    out = {"latencies": [], "statuses": {}, "errors": {}}
    total = int(rate * duration)
    lateness = []
    tasks = []
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.monotonic()
    start = loop.time() + 0.05
    for i in range(total):
        scheduled = start + i / rate
        delay = scheduled - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        lateness.append(loop.time() - scheduled)
        tasks.append(asyncio.create_task(_one(port, requests[i % len(requests)], scheduled, timeout, out)))
    send_wall = time.monotonic() - wall0
    await asyncio.gather(*tasks)
    wall = time.monotonic() - wall0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    lat = out["latencies"]
    ok = sum(n for s, n in out["statuses"].items() if 200 <= s < 300)
    return {
        "rate": rate, "duration": duration, "scheduled": total, "answered": len(lat), "ok": ok,
        "statuses": {str(k): v for k, v in sorted(out["statuses"].items())}, "errors": out["errors"],
        "p50_ms": percentile(lat, 50) * 1000, "p90_ms": percentile(lat, 90) * 1000,
        "p99_ms": percentile(lat, 99) * 1000, "max_ms": max(lat, default=float("nan")) * 1000,
        "lateness_p50_ms": percentile(lateness, 50) * 1000, "lateness_p99_ms": percentile(lateness, 99) * 1000,
        "lateness_max_ms": max(lateness, default=0) * 1000,
        "achieved_send_rate": total / send_wall if send_wall else 0,
        "cpu_percent": 100 * cpu / wall if wall else 0,
        "wrapped": total > len(requests),
    }


def read_requests(path: str) -> list[bytes]:
    with open(path, "rb") as f:
        return [r for r in f.read().split(b"\0") if r]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument("--requests", required=True)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    result = asyncio.run(run(args.port, args.rate, args.duration, read_requests(args.requests), args.timeout))
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
