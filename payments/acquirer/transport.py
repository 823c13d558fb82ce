"""The wire under every acquirer's HTTP client (cashfree/client.py, razorpay/client.py): the one
copy of what does not depend on whose API it is. Each client keeps its own headers, error
words and answer readers in its package; this module holds:

- base_address: a base address is https, or plain http on a loopback host (tests, doubles).
- exchange: one request on a kept-alive connection of the process's pool for that address,
  bounded end to end by `timeout` (waiting for a free connection included): a watchdog shuts
  the socket down, so a server that trickles bytes cannot hold a worker past it. Redirects and
  retries are never followed; an answer past MAX_RESPONSE_BYTES is refused.
- within_limit: the call within the account's shared outbound limit, a 429 (Throttled) asked
  again once after its retry time when that fits in the call's time, otherwise LimitReached.

Why urllib3: it is the HTTP library under requests and the acquirers' SDKs, kept by a team that
fixes its TLS and parsing bugs for most of Python, and its connection pool is exactly what we
need (a bounded set of keep-alive connections per host, a dropped one noticed before reuse, no
retries or redirects unless asked). What urllib3 does not do is bound a call end to end (its
timeouts are per socket operation): the watchdog in exchange keeps that guarantee, over the
connection the call sends on.
"""
from __future__ import annotations

import http.client
import ipaddress
import math
import os
import socket
import threading
import time
from typing import Any, Callable
from urllib.parse import SplitResult, urlsplit

import urllib3
from django.views.decorators.debug import sensitive_variables

from payments.acquirer.limits import LimitReached

MAX_RESPONSE_BYTES = 1 << 20  # a status query's list is a few kB; more is not an acquirer
# Connections kept per process and acquirer address: a sync web worker makes one call at a
# time, a threaded one a few; a call finding all of them busy waits for one within its time.
POOL_CONNECTIONS = 8


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def base_address(base_url: str, setting: str) -> SplitResult:
    """`base_url` split, when it is https (or http on a loopback host); ValueError naming the
    `setting` otherwise."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{setting} must be an https address, not {base_url!r}")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ValueError(f"{setting} must be https (plain http only on loopback)")
    return parts


class Throttled(Exception):
    """The acquirer answered 429: raised by a client's single call for within_limit to handle."""

    def __init__(self, retry_after: float, request_id: str):
        super().__init__(retry_after, request_id)
        self.retry_after, self.request_id = retry_after, request_id


def retry_seconds(value: str | None) -> float:
    """A 429's retry header as seconds to wait; 1 when absent or odd."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return 1.0
    return seconds if 0 < seconds <= 3600 else 1.0


def within_limit(acquirer: str, method: str, path: str, *, budget: float,
                 permit: Callable[[], Any], once: Callable[[], Any]) -> Any:
    """`once()` after `permit()` (the account's shared outbound limit) and, when it is
    Throttled, once more after the retry time if that ends before `budget` (a monotonic
    time); otherwise LimitReached with the seconds to wait."""
    for attempt in (1, 2):
        permit()
        try:
            return once()
        except Throttled as throttled:
            wait = throttled.retry_after
            if attempt == 2 or time.monotonic() + wait >= budget:
                raise LimitReached(f"{acquirer} {method} {path.split('?')[0]}: rate limited (HTTP 429; "
                                   f"request id {throttled.request_id})", retry_after=math.ceil(wait)) from None
            time.sleep(wait)


@sensitive_variables("headers", "payload")
def exchange(address: SplitResult, method: str, path: str, headers: dict[str, str], payload: bytes | None, *,
             timeout: float, too_large: Callable[[int], Exception],
             ssl_context=None) -> tuple[int, dict[str, str], bytes]:
    """(status, lower-cased headers, body) of one request to `address`'s host, bounded end to
    end by `timeout`. Raises TimeoutError past it, an OSError or http.client.HTTPException when
    there was no answer, or `too_large(status)` for an answer past MAX_RESPONSE_BYTES."""
    pool = _pool(address.scheme, address.hostname, address.port, ssl_context)
    timed_out = threading.Event()
    using: list[socket.socket] = []  # the sockets this call sends on (_Watched.request)

    def watchdog() -> None:
        timed_out.set()
        for sock in using:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    started = time.monotonic()
    timer = threading.Timer(timeout, watchdog)
    timer.daemon = True
    timer.start()
    _watching.sockets = using
    response = None
    try:
        response = pool.urlopen(
            method, path, body=payload, headers=headers, retries=False, redirect=False,
            timeout=urllib3.Timeout(connect=timeout, read=timeout),
            pool_timeout=max(0.001, timeout - (time.monotonic() - started)),
            preload_content=False, release_conn=False, decode_content=False)
        data = response.read(MAX_RESPONSE_BYTES + 1)
        if len(data) > MAX_RESPONSE_BYTES:
            raise too_large(response.status)
        if timed_out.is_set():
            raise TimeoutError("the call ran past its timeout")
        response_headers = {key.lower(): value for key, value in response.headers.items()}
        status = response.status
        response.release_conn()  # read to its end: the connection is kept for the next call
        response = None
        return status, response_headers, data
    except urllib3.exceptions.HTTPError as exc:
        if timed_out.is_set():
            raise TimeoutError("the call ran past its timeout") from None
        raise ConnectionError(f"{type(exc).__name__}") from None
    except (OSError, http.client.HTTPException):
        if timed_out.is_set():
            raise TimeoutError("the call ran past its timeout") from None
        raise
    finally:
        timer.cancel()
        _watching.sockets = None
        if response is not None:  # not read to its end: the connection is not reused
            response.close()
            response.release_conn()


# -- the connections ---------------------------------------------------------------------------

_watching = threading.local()


class _Watched:
    """A pool connection that tells the current call's watchdog which socket it sends on."""

    def request(self, *args, **kwargs):
        # The socket itself, not the connection: http.client hands the socket over to the
        # response (and sets .sock to None) when the server says it will close.
        sockets = _watching.__dict__.get("sockets")
        if sockets is not None and self.sock is not None:
            sockets.append(self.sock)  # a kept-alive connection, reused
        try:
            return super().request(*args, **kwargs)
        finally:
            if sockets is not None and self.sock is not None:
                sockets.append(self.sock)  # connected by this request


class _WatchedHTTPConnection(_Watched, urllib3.connection.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, urllib3.connection.HTTPSConnection):
    pass


class _HTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _HTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_pools: dict[tuple, urllib3.HTTPConnectionPool] = {}
_pools_lock = threading.Lock()


def _pool(scheme: str, host: str, port: int | None, ssl_context) -> urllib3.HTTPConnectionPool:
    """This process's pool for one address (a forked worker makes its own: a connection is never
    shared between processes). `ssl_context` None: the system's trusted CAs."""
    key = (os.getpid(), scheme, host, port, id(ssl_context))
    pool = _pools.get(key)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(key)
            if pool is None:
                if scheme == "https":
                    pool = _HTTPSPool(host, port, maxsize=POOL_CONNECTIONS, block=True, retries=False,
                                      ssl_context=ssl_context)
                else:
                    pool = _HTTPPool(host, port, maxsize=POOL_CONNECTIONS, block=True, retries=False)
                _pools[key] = pool
    return pool
