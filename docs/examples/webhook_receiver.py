"""A webhook receiver for the payment gateway, using only the Python standard library.

Run it:   WEBHOOK_SECRET=whsec_... python webhook_receiver.py 8080
and set the merchant's webhook address to http(s)://<your host>:8080/webhook.

What it does, in the order that matters:
1. reads the raw request body, byte for byte (never a re-serialised JSON object);
2. checks X-Service-Signature: "<timestamp ms>.<base64 HMAC-SHA256 of '<timestamp ms>.<raw body>'>",
   keyed with the webhook secret, with a constant-time comparison, and the timestamp within
   300000 ms of now; if that fails, X-Service-Signature-Previous the same way (sent only while a
   rotated secret is in its grace period, signed with the secret it replaced, so this receiver
   keeps working between the rotation and the deploy of the new secret); anything else gets 401;
3. drops an event it has already processed, by X-Service-Event-Id (delivery is at least once),
   and still answers 200 so that the gateway stops retrying;
4. hands a new event to your handler and remembers its id **only after the handler succeeded**.
   If the handler raises, the id is not remembered and the answer is 500, so the gateway's retry
   is processed (remembering it first would answer the retry "duplicate" and lose the event).
   A second delivery arriving while the first is still being handled gets 409 and is retried;
5. answers quickly; slow work belongs in your own queue.

In production keep the processed event ids in your database (a unique column), not in memory,
and insert the id in the same transaction as the handler's own writes: both commit or neither.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_MS = 300_000


class InvalidSignature(Exception):
    pass


def verify_signature(raw_body: bytes, header: str | None, secret: str, *,
                     now_ms: int | None = None, tolerance_ms: int = TOLERANCE_MS) -> None:
    """Raise InvalidSignature unless `header` is a valid, fresh signature of `raw_body`."""
    if not header or "." not in header:
        raise InvalidSignature("malformed X-Service-Signature")
    timestamp, _, signature = header.partition(".")
    if not timestamp.isdigit() or not signature:
        raise InvalidSignature("malformed X-Service-Signature")
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    if abs(now_ms - int(timestamp)) > tolerance_ms:
        raise InvalidSignature("timestamp outside the tolerance")
    signed = timestamp.encode("ascii") + b"." + raw_body
    expected = base64.b64encode(hmac.new(secret.encode(), signed, hashlib.sha256).digest())
    if not hmac.compare_digest(expected, signature.encode("ascii", errors="replace")):
        raise InvalidSignature("signature mismatch")


def verify_webhook(raw_body: bytes, headers, secret: str, *, now_ms: int | None = None) -> None:
    """Raise InvalidSignature unless X-Service-Signature, or else X-Service-Signature-Previous,
    verifies with `secret`. During a rotation's grace period the gateway signs with the new
    secret (X-Service-Signature) and with the one it replaced (X-Service-Signature-Previous):
    whichever of the two this receiver holds, one verifies. Once you hold the new secret the
    previous header never verifies and does no harm; a forger holding neither is refused."""
    try:
        verify_signature(raw_body, headers.get("X-Service-Signature"), secret, now_ms=now_ms)
    except InvalidSignature:
        previous = headers.get("X-Service-Signature-Previous")
        if not previous:
            raise
        verify_signature(raw_body, previous, secret, now_ms=now_ms)


class SeenEvents:
    """Event ids already processed, and those being processed right now. Swap for a database
    table with a unique constraint, written in the same transaction as the handler's work."""

    NEW, IN_PROGRESS, DONE = "new", "in progress", "done"

    def __init__(self):
        self._done: set[str] = set()
        self._in_progress: set[str] = set()
        self._lock = threading.Lock()

    def begin(self, event_id: str) -> str:
        """DONE: processed before; IN_PROGRESS: another delivery is being handled right now;
        NEW: the caller now handles it and must call done() or release()."""
        with self._lock:
            if event_id in self._done:
                return self.DONE
            if event_id in self._in_progress:
                return self.IN_PROGRESS
            self._in_progress.add(event_id)
            return self.NEW

    def done(self, event_id: str) -> None:
        """The handler succeeded: every later delivery of the event is a duplicate."""
        with self._lock:
            self._in_progress.discard(event_id)
            self._done.add(event_id)

    def release(self, event_id: str) -> None:
        """The handler failed: forget the attempt, so the gateway's retry is handled afresh."""
        with self._lock:
            self._in_progress.discard(event_id)


def make_handler(secret: str, on_event, seen: SeenEvents | None = None):
    """A request handler class that verifies, de-duplicates and hands each event to `on_event(event_id, payload)`."""
    seen = seen or SeenEvents()

    class WebhookHandler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw_body = self.rfile.read(length)  # the exact bytes that were signed
            try:
                verify_webhook(raw_body, self.headers, secret)
            except InvalidSignature as exc:
                return self._answer(401, {"error": str(exc)})
            event_id = self.headers.get("X-Service-Event-Id", "")
            state = seen.begin(event_id)
            if state == SeenEvents.DONE:
                return self._answer(200, {"received": True, "duplicate": True})
            if state == SeenEvents.IN_PROGRESS:
                # Not 200: should the other delivery's handler fail, this event would be lost.
                return self._answer(409, {"error": "this event is being processed; retry later"})
            try:
                on_event(event_id, json.loads(raw_body))
            except Exception:
                # Not remembered: the gateway retries on any non-2xx and the retry is processed.
                logging.getLogger("webhook_receiver").exception("event %s: handler failed", event_id)
                seen.release(event_id)
                return self._answer(500, {"error": "processing failed; retry later"})
            seen.done(event_id)  # only now: a handler that raised must not make its retry a "duplicate"
            return self._answer(200, {"received": True})

        def _answer(self, status: int, body: dict):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):
            pass

    return WebhookHandler


def make_server(secret: str, on_event, *, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), make_handler(secret, on_event))


if __name__ == "__main__":
    def print_event(event_id, payload):
        print(event_id, payload.get("event") or payload.get("status"), flush=True)

    server = make_server(os.environ["WEBHOOK_SECRET"], print_event, host="0.0.0.0",
                         port=int(sys.argv[1]) if len(sys.argv) > 1 else 8080)
    print(f"listening on port {server.server_address[1]}", flush=True)
    server.serve_forever()
