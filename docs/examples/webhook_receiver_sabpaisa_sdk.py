"""A webhook receiver built on the official SabPaisa SDK 1.0.1 (`pip install sabpaisa-python==1.0.1`,
package `sabpaisa_sdk`), for a merchant whose code already uses it.

Run it:   WEBHOOK_SECRET=whsec_... python webhook_receiver_sabpaisa_sdk.py 8080

The one setting: the SDK's `Webhooks.verify_signature` measures the signature's age in SECONDS,
but this gateway's timestamps are in MILLISECONDS (interface.md), so with its default
`tolerance=300` every delivery looks about 1.7 trillion seconds old and is refused. Pass
`tolerance=0`, which turns the SDK's age check off while it still checks the HMAC in constant
time, and check the age yourself in milliseconds (300000 ms), as `verify` below does. Without
that second check a captured webhook could be replayed forever.

Also:
- the signature checked is `X-SabPaisa-Signature` (the same value as `X-Service-Signature`);
  while a rotated webhook secret is in its grace period, a receiver still holding the previous
  secret finds a signature it can check in `X-Service-Signature-Previous`;
- duplicates are dropped by `idempotency_key` (in the payload, the same on every retry and
  resend), remembered only after the handler succeeded;
- amounts in the payload are PAISE (`paid_amount: 150000` is Rs 1,500.00), unlike the live
  SabPaisa API's rupee decimals.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sabpaisa_sdk import InvalidWebhookSignatureError, Webhooks

TOLERANCE_MS = 300_000
SIGNATURE_HEADERS = ("X-SabPaisa-Signature", "X-Service-Signature-Previous")


def verify(headers, raw_body: bytes, verifier: Webhooks, *, now_ms: int | None = None) -> None:
    """Raise InvalidWebhookSignatureError unless one signature header verifies and is fresh."""
    error = InvalidWebhookSignatureError("X-SabPaisa-Signature header is missing")
    for name in SIGNATURE_HEADERS:
        header = headers.get(name)
        if not header:
            continue
        try:
            # tolerance=0: the SDK's age check counts seconds; ours is done below, in ms.
            verifier.verify_signature(header, raw_body, tolerance=0)
        except InvalidWebhookSignatureError as exc:
            error = exc
            continue
        timestamp_ms = int(header.partition(".")[0])  # the SDK has checked it is all digits
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        if abs(now_ms - timestamp_ms) > TOLERANCE_MS:
            raise InvalidWebhookSignatureError("Webhook timestamp is outside 300000 ms")
        return
    raise error


def make_handler(secret: str, on_event):
    verifier = Webhooks(secret)
    done: set[str] = set()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            raw_body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                verify(self.headers, raw_body, verifier)
            except InvalidWebhookSignatureError as exc:
                return self._answer(401, {"error": str(exc)})
            payload = json.loads(raw_body)
            key = payload.get("idempotency_key")
            if not key:
                return self._answer(400, {"error": "idempotency_key missing"})
            with lock:
                if key in done:
                    return self._answer(200, {"received": True, "duplicate": True})
            try:
                on_event(key, payload)
            except Exception:  # noqa: BLE001 - not remembered: the gateway retries and it is processed
                return self._answer(500, {"error": "processing failed; retry later"})
            with lock:
                done.add(key)
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

    return Handler


if __name__ == "__main__":
    def print_event(key, payload):
        print(key, payload.get("event"), payload.get("paid_amount"), flush=True)

    server = ThreadingHTTPServer(("127.0.0.1" if os.environ.get("LOOPBACK_ONLY") else "0.0.0.0",
                                  int(sys.argv[1]) if len(sys.argv) > 1 else 8080),
                                 make_handler(os.environ["WEBHOOK_SECRET"], print_event))
    print(f"listening on port {server.server_address[1]}", flush=True)
    server.serve_forever()
