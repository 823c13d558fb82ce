"""An open-loop load generator: requests leave at fixed intervals whatever the server does,
and each latency is measured from the time the request was SCHEDULED, not sent, so a slow
server cannot hide its queue (no coordinated omission, as wrk2 does it).

    python -m benchmarks.openloop --port 8391 --rate 150 --duration 10 --requests FILE --out result.json
                                  [--tls-ca CERT]

FILE is the NUL-separated raw requests of benchmarks/bodies.py, sent in order, each once
(wrapping if the file is shorter than rate x duration). Every request has a connection of its
own, as gunicorn's sync workers close the connection after each answer anyway. With --tls-ca
each connection is HTTPS with a full handshake of its own (no session resumption), as a
merchant's backend using the official SDK's urlopen makes it; the latency includes the
handshake. The result says how late the generator itself sent (`lateness_*`) and the CPU it
used, to show it was not the bottleneck.

One thread on epoll with non-blocking sockets, no asyncio: the generator shares the two cores
with the server it measures, and asyncio's streams, tasks and timeouts cost about 0.5 ms of
CPU a request (30% of a core at 580/s), which the server's latency then paid for.
"""
from __future__ import annotations

import argparse
import errno
import json
import math
import resource
import select
import socket
import ssl
import time

_CONNECTING, _HANDSHAKING, _SENDING, _READING = 0, 1, 2, 3
_WAITING = object()  # attempt(): nothing to go on with yet


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    # Nearest rank: the smallest value with at least p% of the values at or below it.
    k = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[k]


class _Request:
    __slots__ = ("sock", "scheduled", "pending", "state", "head", "status", "body_left")

    def __init__(self, sock: socket.socket, scheduled: float, raw: bytes):
        self.sock = sock
        self.scheduled = scheduled
        self.pending = memoryview(raw)
        self.state = _CONNECTING
        self.head = b""
        self.status = 0
        self.body_left = -1  # unknown until the head is in


def _answer_status(head: bytes) -> tuple[int, int]:
    """(status, content length) of a response head."""
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        if line[:15].lower() == b"content-length:":
            length = int(line[15:].strip())
    return status, length


def run(port: int, rate: float, duration: float, requests: list[bytes], timeout: float,
        tls: ssl.SSLContext | None = None) -> dict:
    """Sends `requests` at `rate` a second for `duration` seconds; `tls`: over HTTPS with this
    context, a new handshake per request."""
    out = {"latencies": [], "statuses": {}, "errors": {}}
    total = int(rate * duration)
    lateness: list[float] = []
    poller = select.epoll()
    open_requests: dict[int, _Request] = {}
    address = ("127.0.0.1", port)

    def fail(request: _Request, kind: str) -> None:
        out["errors"][kind] = out["errors"].get(kind, 0) + 1
        finish(request)

    def finish(request: _Request) -> None:
        fd = request.sock.fileno()
        open_requests.pop(fd, None)
        try:
            poller.unregister(fd)
        except (OSError, ValueError):
            pass
        request.sock.close()

    def wait_for(request: _Request, events: int) -> None:
        poller.modify(request.sock.fileno(), events)

    def connected(request: _Request) -> None:
        """The TCP connection is up: the TLS handshake, or the request."""
        if tls is None:
            request.state = _SENDING
            send(request)
            return
        request.sock = tls.wrap_socket(request.sock, server_hostname=address[0], do_handshake_on_connect=False)
        request.state = _HANDSHAKING
        handshake(request)

    def attempt(request: _Request, call):
        """call()'s result; or, when TLS must first read or write, _WAITING after waiting for
        that; or _WAITING after failing the request on any other error."""
        try:
            return call()
        except ssl.SSLWantReadError:
            wait_for(request, select.EPOLLIN)
        except ssl.SSLWantWriteError:
            wait_for(request, select.EPOLLOUT)
        except OSError as exc:
            fail(request, type(exc).__name__)
        return _WAITING

    def handshake(request: _Request) -> None:
        if attempt(request, request.sock.do_handshake) is _WAITING:
            return
        request.state = _SENDING
        send(request)

    def send(request: _Request) -> None:
        sent = attempt(request, lambda: request.sock.send(request.pending))
        if sent is _WAITING:
            return
        request.pending = request.pending[sent:]
        if not request.pending:
            request.state = _READING
            wait_for(request, select.EPOLLIN)
        else:
            wait_for(request, select.EPOLLOUT)

    def read(request: _Request, now: float) -> None:
        # A TLS socket may hold decrypted bytes that epoll cannot see: read until it has none.
        while True:
            try:
                chunk = request.sock.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return  # a record not whole yet, or the server's session ticket without data
            except OSError as exc:
                fail(request, type(exc).__name__)
                return
            if not chunk:
                fail(request, "ClosedBeforeAnswer")
                return
            if request.body_left < 0:
                request.head += chunk
                end = request.head.find(b"\r\n\r\n")
                if end >= 0:
                    request.status, length = _answer_status(request.head[:end])
                    request.body_left = length - (len(request.head) - end - 4)
            else:
                request.body_left -= len(chunk)
            if request.status and request.body_left <= 0:
                out["latencies"].append(now - request.scheduled)
                out["statuses"][request.status] = out["statuses"].get(request.status, 0) + 1
                finish(request)
                return
            if tls is None or not request.sock.pending():
                return

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.monotonic()
    start = time.monotonic() + 0.05
    sent_all_at = None
    next_timeout_check = start
    i = 0
    while i < total or open_requests:
        now = time.monotonic()
        while i < total and start + i / rate <= now:
            scheduled = start + i / rate
            lateness.append(now - scheduled)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            request = _Request(sock, scheduled, requests[i % len(requests)])
            i += 1
            open_requests[sock.fileno()] = request
            code = sock.connect_ex(address)
            if code == 0:
                poller.register(sock.fileno(), select.EPOLLOUT)
                connected(request)
            elif code == errno.EINPROGRESS:
                poller.register(sock.fileno(), select.EPOLLOUT)
            else:
                fail(request, errno.errorcode.get(code, str(code)))
        if i >= total and sent_all_at is None:
            sent_all_at = time.monotonic()
        wait = (start + i / rate - time.monotonic()) if i < total else 0.1
        for fd, events in poller.poll(max(wait, 0)):
            request = open_requests.get(fd)
            if request is None:
                continue
            if request.state == _READING:
                read(request, time.monotonic())
            elif request.state == _HANDSHAKING:
                handshake(request)
            elif request.state == _SENDING:
                send(request)
            elif events & (select.EPOLLERR | select.EPOLLHUP):
                code = request.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                fail(request, errno.errorcode.get(code, "ConnectError"))
            else:
                connected(request)
        now = time.monotonic()
        if now >= next_timeout_check:
            next_timeout_check = now + 0.5
            for request in [r for r in open_requests.values() if now - r.scheduled > timeout]:
                fail(request, "TimeoutError")
    wall = time.monotonic() - wall0
    send_wall = (sent_all_at or time.monotonic()) - wall0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    poller.close()
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
        "cpu_percent": 100 * cpu / wall if wall else 0, "cpu_seconds": cpu,
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
    parser.add_argument("--tls-ca", help="HTTPS, trusting this certificate (PEM)")
    args = parser.parse_args()
    tls = ssl.create_default_context(cafile=args.tls_ca) if args.tls_ca else None
    result = run(args.port, args.rate, args.duration, read_requests(args.requests), args.timeout, tls)
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
