"""A real HTTP receiver on loopback, for tests that need something to call (webhooks, above all).

It is an http.server in a background thread on 127.0.0.1 and an ephemeral port. It records
every request (method, path, headers, raw body) before answering, and answers from a script:

    with Receiver() as receiver:                         # answers 200 {"ok": true} to everything
        merchant = make_merchant(webhook_url=receiver.url("/hook"))
        ...
        first, = receiver.wait_for(1, timeout=15)        # raises AssertionError on timeout
        assert first.headers["X-Service-Event-Id"].startswith("evt_")

    Receiver(responses=[500, 500, 200])                  # two failures, then success (and the
                                                         # default, 200, once the script runs out)
    Receiver(responses=[Reply(hang=True), 200])          # never answer the first request
    Receiver(responses=[Reply(status=200, delay=1.5)])   # answer after 1.5 s
    Receiver(default=Reply(status=302, headers={"Location": "https://elsewhere.example/"}))

`receiver.respond_with(...)` replaces the script later. A hanging request is released by
`receiver.release()` or `stop()`, and never hangs for longer than `max_hang` seconds, so a
forgotten receiver cannot wedge a test run. In pytest, tests/webhooks/conftest.py has a
`receiver` fixture; elsewhere use the context manager.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Receiver", "Reply", "RecordedRequest"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `hang` keeps the connection open without answering."""

    status: int = 200
    body: bytes | str | dict = b'{"ok":true}'
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False

    def body_bytes(self) -> bytes:
        if isinstance(self.body, dict):
            return json.dumps(self.body).encode()
        return self.body.encode() if isinstance(self.body, str) else self.body


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Message  # case-insensitive: headers["x-service-signature"] works
    body: bytes
    received_at: float  # time.time()

    def json(self):
        return json.loads(self.body)


class Receiver:
    def __init__(self, *, responses=(), default: Reply | int = 200, max_hang: float = 60.0):
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._script: deque[Reply] = deque()
        self._default = _as_reply(default)
        self._released = threading.Event()
        self.max_hang = max_hang
        self.requests: list[RecordedRequest] = []
        self.respond_with(*responses)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                reply = receiver._record(RecordedRequest(self.command, self.path, self.headers, body, time.time()))
                if reply.hang:
                    receiver._released.wait(receiver.max_hang)
                    self.close_connection = True
                    return
                if reply.delay:
                    receiver._released.wait(reply.delay)
                payload = reply.body_bytes()
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    if "content-type" not in {k.lower() for k in reply.headers}:
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (its timeout): nothing to answer to
                self.close_connection = True

            do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _handle

            def log_message(self, format, *args):  # keep test output quiet
                pass

        self._released.clear()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="test-receiver", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # addresses -----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "start() the receiver first"
        return self._server.server_address[1]

    def url(self, path: str = "/webhook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    # script --------------------------------------------------------------------------------
    def respond_with(self, *responses: Reply | int, default: Reply | int | None = None) -> None:
        """Replace the script: each request takes the next answer, then the default."""
        with self._lock:
            self._released.clear()
            self._script = deque(_as_reply(r) for r in responses)
            if default is not None:
                self._default = _as_reply(default)

    def release(self) -> None:
        """Let every hanging or delayed request go (hanging ones are dropped unanswered), and
        later ones too, until the next respond_with()."""
        self._released.set()

    def _record(self, request: RecordedRequest) -> Reply:
        with self._arrived:
            self.requests.append(request)
            reply = self._script.popleft() if self._script else self._default
            self._arrived.notify_all()
        return reply

    # observation ---------------------------------------------------------------------------
    def wait_for(self, n: int, timeout: float = 15.0) -> list[RecordedRequest]:
        """Block until at least `n` requests have arrived; return them all. AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.requests) < n:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"expected {n} request(s) within {timeout} s, got {len(self.requests)}")
                self._arrived.wait(remaining)
            return list(self.requests)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)


def _as_reply(value: Reply | int) -> Reply:
    return value if isinstance(value, Reply) else Reply(status=int(value))
