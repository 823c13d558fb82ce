"""One HTTP POST to a merchant, with the guarantees a webhook needs and nothing else.

- The host is resolved once and the connection goes to an address from that answer, checked
  by gateway.core.urlcheck outside development: DNS rebinding cannot reach a private range.
- Redirects are not followed: a 3xx is a failed attempt (the body must not be bounced to
  another host), and its Location is reported so the merchant can fix the address.
- The whole attempt, connect to last byte read, is bounded by `timeout`: a watchdog shuts the
  socket down, so a receiver that trickles bytes cannot hold a worker past it.
- Only the first bytes of the answer are read, for the attempt log.
"""
from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from gateway.core.errors import GatewayError
from gateway.core.urlcheck import webhook_host_addresses

READ_BYTES = 4096


@dataclass
class Result:
    status: int | None = None
    snippet: str = ""
    error: str = ""
    duration_ms: int = 0

    @property
    def ok(self) -> bool:
        return not self.error and self.status is not None and 200 <= self.status < 300


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to one of the addresses already checked, never re-resolving the host name."""

    def __init__(self, host, port, *, addresses, timeout):
        super().__init__(host, port, timeout=timeout)
        self._addresses = addresses

    def _connect_socket(self) -> socket.socket:
        last_error = None
        for address in self._addresses:
            try:
                return socket.create_connection((address, self.port), self.timeout)
            except OSError as exc:
                last_error = exc
        raise last_error or OSError("no address to connect to")

    def connect(self):
        self.sock = self._connect_socket()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host, port, *, addresses, timeout):
        super().__init__(host, port, timeout=timeout)
        self._addresses = addresses

    _connect_socket = _PinnedHTTPConnection._connect_socket

    def connect(self):
        # The certificate is checked against the host name, not the address we pinned.
        self.sock = self._context.wrap_socket(self._connect_socket(), server_hostname=self.host)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.timeout):
        return "timed out"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]


def post(url: str, body: bytes, headers: dict, *, timeout: float, from_request: bool = False) -> Result:
    """POST `body` to `url` and report what happened. Never raises for network trouble.
    `from_request`: the address arrived in an API request, so it is never let reach a private
    network (gateway.core.urlcheck.private_allowed)."""
    started = time.monotonic()

    def finish(**kwargs) -> Result:
        return Result(duration_ms=int((time.monotonic() - started) * 1000), **kwargs)

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return finish(error="the webhook address is not an http(s) address")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = webhook_host_addresses(parts.hostname, port, field="", from_request=from_request)
    except GatewayError as exc:
        return finish(error=f"address refused at delivery time: {exc.message}")

    cls = _PinnedHTTPSConnection if parts.scheme == "https" else _PinnedHTTPConnection
    conn = cls(parts.hostname, port, addresses=addresses, timeout=timeout)
    expired = threading.Event()

    def abort():
        expired.set()
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout, abort)
    watchdog.daemon = True
    watchdog.start()
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
    except Exception as exc:  # noqa: BLE001 - every network failure is a failed attempt
        watchdog.cancel()
        conn.close()
        if expired.is_set() or isinstance(exc, socket.timeout):
            return finish(error=f"no answer within {timeout:g} s")
        return finish(error=_describe(exc))
    # The status line is the answer; the body is read only for the log, so a body that
    # never ends does not turn an acknowledgement into a failure.
    status, location = response.status, response.getheader("Location", "")
    try:
        raw = response.read(READ_BYTES)
    except Exception:  # noqa: BLE001
        raw = b"" if not expired.is_set() else b"[the body did not arrive within the timeout]"
    finally:
        watchdog.cancel()
        conn.close()
    snippet = raw.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    if 300 <= status < 400:
        return finish(status=status, snippet=snippet,
                      error=f"redirect not followed (Location: {location[:300]}); "
                            "point the webhook address at the final URL")
    if not 200 <= status < 300:
        return finish(status=status, snippet=snippet, error=f"HTTP {status}")
    return finish(status=status, snippet=snippet)
