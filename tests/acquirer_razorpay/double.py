"""A stateful double of Razorpay's Payments API, for tests: a real HTTP server on loopback that
keeps orders, payments and refunds in memory and lets a test play Razorpay's side of a flow:
settle a payment (`settle_payment`) or a refund (`settle_refund`), deliver the signed webhook
Razorpay would send (`send_webhook`) or hold it back, refuse or throttle every call, or carry a
call out and lose its answer (`lose_answers`).

What it holds itself to: EVERY answer it gives (errors included), and every webhook it sends, is
checked against our schema of Razorpay's shapes (razorpay.schema.json, derived from the vendored
fixtures of razorpay/razorpay-python; shapes.py). A violation is recorded in `violations`, and the
`razorpay_double` fixture fails the test on any: a double that drifts from what Razorpay's own
client was tested with cannot make a test pass.

It answers the calls client.py makes: POST /v1/orders, GET /v1/orders?receipt=,
GET /v1/orders/{id}/payments, POST /v1/payments/create/upi, POST /v1/payments/create/json,
GET /v1/payments/{id}, POST /v1/payments/{id}/capture, POST /v1/payments/{id}/refund,
GET /v1/payments/{id}/refunds, with HTTP Basic authentication by key id and secret.

It also serves a local stand-in of Razorpay Standard Checkout (checkout_js/: checkout.js at
/v1/checkout.js, with the real script's interface, and its frame at /v1/checkout/public), which
pays from the double's own origin as the real frame pays from Razorpay's: POST
/v1/payments/create/checkout (the card, with the public key id, as the frame sends it) answers
the payment and its OTP step, and POST /v1/payments/{id}/otp/submit settles it by the issuer's
OTP (CARD_OTP approves: the payment is `authorized`, for the gateway to capture; any other fails
it) and answers what the checkout's handler gets: razorpay_payment_id, razorpay_order_id and
razorpay_signature. Those answers are held to the schema too. `seen` keeps every request body
received, API or checkout, so a test can say where a card number went.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import itertools
import json
import random
import string
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.acquirer_razorpay.shapes import shape_errors

KEY_ID = "rzp_test_DoubleKey0001"
KEY_SECRET = "rzp_double_secret_0123456789"
WEBHOOK_SECRET = "rzp_double_webhook_secret"
# The issuer's OTP that approves a card paid in the checkout stand-in's frame.
CARD_OTP = "123456"
# The Standard Checkout stand-in's files, served at /v1/<path> (the real script's path).
_CHECKOUT_JS = Path(__file__).resolve().parent / "checkout_js"
_CHECKOUT_FILES = {"checkout.js": ("checkout.js", "text/javascript; charset=utf-8"),
                   "checkout/public": ("public.html", "text/html; charset=utf-8")}


def sign(secret: str, body: bytes) -> str:
    """What Razorpay puts in X-Razorpay-Signature (its docs: hex HMAC-SHA256 of the raw body with
    the webhook secret). Written out here again, not imported, so that the test does not check
    the gateway's verification against itself."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def checkout_signature(secret: str, order_id: str, payment_id: str) -> str:
    """What Razorpay's checkout hands its handler as razorpay_signature (its docs: hex HMAC-SHA256
    of "order_id|payment_id" with the key secret). Written out here again, not imported."""
    return hmac.new(secret.encode(), f"{order_id}|{payment_id}".encode(), hashlib.sha256).hexdigest()


@dataclass
class Call:
    method: str
    path: str
    body: Any
    status: int


@dataclass
class Delivery:
    body: bytes
    headers: dict
    status: int
    answer: Any


class RazorpayDouble:
    """Start with `start()` (or use the fixture); `base_url` is what RAZORPAY_BASE_URL gets."""

    PREFIX = "/v1"

    def __init__(self, *, key_id: str = KEY_ID, key_secret: str = KEY_SECRET, webhook_secret: str = WEBHOOK_SECRET):
        self.key_id, self.key_secret, self.webhook_secret = key_id, key_secret, webhook_secret
        self.webhook_url = ""
        self.orders: dict[str, dict] = {}
        self.payments: dict[str, dict] = {}
        self.refunds: dict[str, dict] = {}
        self.settlements: list[dict] = []     # payouts (settle(), or a test's own), newest first
        self.recon_lines: list[dict] = []     # their lines, as the day's recon lists them
        self._settled: set[str] = set()
        self.calls: list[Call] = []
        self.deliveries: list[Delivery] = []
        self.violations: list[str] = []
        self.seen: list[bytes] = []           # every request body received, API or checkout
        self.unavailable = False              # True: every call answers 500 SERVER_ERROR
        self.throttled: float | None = None   # seconds: every call answers 429 with Retry-After
        self.delay = 0.0                      # seconds every answer waits (a slow Razorpay)
        self.refuse_payments = False          # True: every payment create answers 400 (Razorpay's "no")
        self.drop = False                     # True: every connection is closed unanswered
        # "METHOD /v1/path" of calls carried out whose answer is then lost (the connection closed
        # unanswered): an order or payment Razorpay created that the gateway never heard of.
        self.lose_answers: set[str] = set()
        self.lock = threading.RLock()
        self._clock = itertools.count(int(time.time()))
        self._server: ThreadingHTTPServer | None = None

    # -- life -----------------------------------------------------------------------------------

    def start(self) -> "RazorpayDouble":
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                double._handle(self)

            def do_POST(self):
                double._handle(self)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"{self.origin}{self.PREFIX}"

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def checkout_js_url(self) -> str:
        """What RAZORPAY_CHECKOUT_JS_URL gets: the stand-in of Standard Checkout's script."""
        return f"{self.base_url}/checkout.js"

    def pay_in_checkout(self, order_id: str, *, number: str = "4111111111111111", otp: str = CARD_OTP,
                        contact: str = "9876543210") -> tuple[int, dict]:
        """What the checkout frame does in the customer's browser, over HTTP to this double: the
        card payment on `order_id`, then the issuer's OTP. The OTP step's status and answer (the
        handler's three values, or Razorpay's error)."""
        status, created = self._post("/payments/create/checkout", {
            "key_id": self.key_id, "order_id": order_id, "method": "card", "contact": contact,
            "card": {"number": number, "expiry_month": "12", "expiry_year": "30", "cvv": "123"}})
        if status != 200:
            return status, created
        return self._post(f"/payments/{created['razorpay_payment_id']}/otp/submit", {"otp": otp})

    def _post(self, path: str, body: dict) -> tuple[int, dict]:
        host, port = self._server.server_address[:2]
        connection = http.client.HTTPConnection(host, port, timeout=10)
        try:
            connection.request("POST", f"{self.PREFIX}{path}", body=json.dumps(body),
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    # -- Razorpay's side of a flow ---------------------------------------------------------------

    @staticmethod
    def _id(prefix: str) -> str:
        return prefix + "".join(random.choices(string.ascii_letters + string.digits, k=14))

    def _now(self) -> int:
        return int(time.time())

    def order_for(self, receipt: str) -> dict:
        with self.lock:
            return next(o for o in self.orders.values() if o["receipt"] == receipt)

    def payments_of(self, receipt: str) -> list[dict]:
        with self.lock:
            order = self.order_for(receipt)
            return [p for p in self.payments.values() if p["order_id"] == order["id"]]

    def newest_payment(self, receipt: str) -> dict:
        found = self.payments_of(receipt)
        if not found:
            raise LookupError(f"order {receipt} has no payment")
        return max(found, key=lambda p: (p["created_at"], p["_seq"]))

    def settle_payment(self, receipt: str, status: str = "captured", *, notify: bool = True,
                       rrn: str | None = None, payment_id: str = "") -> dict:
        """The newest payment of the order with `receipt` (or `payment_id`) ends `status`:
        "captured" (or "authorized", to be captured by the gateway) or "failed"; with `notify`,
        the webhook Razorpay sends is delivered."""
        with self.lock:
            payment = self.payments[payment_id] if payment_id else self.newest_payment(receipt)
            order = self.orders[payment["order_id"]]
            if status in ("captured", "authorized"):
                payment["status"] = status
                payment["captured"] = status == "captured"
                payment["acquirer_data"] = {"rrn": rrn if rrn is not None else f"{random.randrange(10**11, 10**12)}"}
                if status == "captured":
                    order["status"], order["amount_paid"], order["amount_due"] = "paid", order["amount"], 0
            else:
                payment["status"] = "failed"
                payment.update(error_code="BAD_REQUEST_ERROR", error_description="Payment failed",
                               error_source="customer", error_step="payment_authentication",
                               error_reason="payment_failed")
            snapshot = self._public(payment)
        if notify:
            event = {"captured": "payment.captured", "authorized": "payment.authorized"}.get(status, "payment.failed")
            self.send_webhook(self.payment_webhook(snapshot, event))
        return snapshot

    def settle_refund(self, refund_id: str, status: str = "processed", *, notify: bool = True) -> dict:
        with self.lock:
            refund = self.refunds[refund_id]
            refund["status"] = status
            if status == "processed":
                refund["acquirer_data"] = {"arn": f"ARN{random.randrange(10**13, 10**14)}"}
            snapshot = dict(refund)
        if notify:
            self.send_webhook(self.refund_webhook(snapshot))
        return snapshot

    def settle(self, *, fee_bp: int = 200, tax_percent: int = 18) -> dict:
        """Razorpay pays out every captured payment not paid out yet, less `fee_bp` basis points of
        it and `tax_percent` % GST on that fee (each rounded half up to the paisa)."""
        with self.lock:
            settlement_id, now = self._id("setl_"), self._now()
            utr = f"RZRP{random.randrange(10**11, 10**12)}"
            amount = fees = tax = 0
            for payment in self.payments.values():
                if payment["status"] != "captured" or payment["id"] in self._settled:
                    continue
                self._settled.add(payment["id"])
                fee = (payment["amount"] * fee_bp + 5_000) // 10_000
                gst = (fee * tax_percent + 50) // 100
                order = self.orders[payment["order_id"]]
                self.recon_lines.append({
                    "entity_id": payment["id"], "type": "payment", "debit": 0, "credit": payment["amount"] - fee - gst,
                    "amount": payment["amount"], "currency": "INR", "fee": fee, "tax": gst, "settlement_id": settlement_id,
                    "settlement_utr": utr, "order_id": order["id"], "order_receipt": order["receipt"], "payment_id": None,
                    "notes": payment["notes"], "settled_at": now})
                amount, fees, tax = amount + payment["amount"] - fee - gst, fees + fee, tax + gst
            settlement = {"id": settlement_id, "entity": "settlement", "amount": amount, "status": "processed",
                          "fees": fees, "tax": tax, "utr": utr, "created_at": now}
            self.settlements.insert(0, settlement)
            return dict(settlement)

    def payment_webhook(self, payment: dict, event: str = "payment.captured") -> dict:
        payload: dict = {"payment": {"entity": self._public(payment)}}
        contains = ["payment"]
        if event == "order.paid":
            with self.lock:
                payload["order"] = {"entity": self._public(self.orders[payment["order_id"]])}
            contains = ["payment", "order"]
        return {"entity": "event", "account_id": "acc_Double0000001", "event": event, "contains": contains,
                "payload": payload, "created_at": self._now()}

    def refund_webhook(self, refund: dict) -> dict:
        event = {"processed": "refund.processed", "failed": "refund.failed"}.get(refund["status"], "refund.created")
        return {"entity": "event", "account_id": "acc_Double0000001", "event": event, "contains": ["refund"],
                "payload": {"refund": {"entity": dict(refund)}}, "created_at": self._now()}

    def signed(self, payload: dict, *, secret: str | None = None) -> tuple[dict, bytes]:
        """The headers and body of a delivery of `payload`, checked against the schema first."""
        self._check(f"webhook {payload.get('event')}", shape_errors("event", payload))
        body = json.dumps(payload, separators=(",", ":")).encode()
        return {"Content-Type": "application/json", "X-Razorpay-Signature": sign(secret or self.webhook_secret, body),
                "X-Razorpay-Event-Id": self._id("evt_")}, body

    def send_webhook(self, payload: dict, *, secret: str | None = None, url: str | None = None) -> Delivery | None:
        """POST `payload`, signed as Razorpay signs, to `url` (default webhook_url; none: kept back)."""
        headers, body = self.signed(payload, secret=secret)
        target = url or self.webhook_url
        if not target:
            return None
        parts = urlsplit(target)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            connection.request("POST", parts.path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        try:
            answer = json.loads(data)
        except ValueError:
            answer = data
        delivery = Delivery(body, headers, response.status, answer)
        with self.lock:
            self.deliveries.append(delivery)
        return delivery

    # -- the server -------------------------------------------------------------------------------

    def _check(self, what: str, errors: list[str]) -> None:
        if errors:
            with self.lock:
                self.violations.extend(f"{what}: {error}" for error in errors)

    @staticmethod
    def _public(entity: dict) -> dict:
        return {k: v for k, v in entity.items() if not k.startswith("_")}

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        if self.drop:
            request.close_connection = True
            request.connection.shutdown(2)
            return
        with self.lock:
            self.seen.append(raw)
        parts = urlsplit(request.path)
        path, query = unquote(parts.path), {k: v[0] for k, v in parse_qs(parts.query).items()}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if self.delay:
            time.sleep(self.delay)
        headers = {}
        served = _CHECKOUT_FILES.get(path[len(self.PREFIX) + 1:]) if path.startswith(self.PREFIX + "/") else None
        if served is not None and request.command == "GET":
            return self._send_file(request, *served)
        if self.throttled is not None:
            status, answer, kind = 429, self._error_body("Too many requests"), "error"
            headers["Retry-After"] = str(self.throttled)
        elif request.command == "POST" and self._checkout_call(path):
            # The checkout frame's own calls: Razorpay's frame speaks for the public key id, not
            # with the secret (which never reaches a browser).
            with self.lock:
                status, answer, kind = self._checkout_route(path, body)
        elif request.headers.get("Authorization") != "Basic " + base64.b64encode(
                f"{self.key_id}:{self.key_secret}".encode()).decode():
            status, answer, kind = 401, self._error_body("Authentication failed"), "error"
        elif self.unavailable:
            status, answer, kind = 500, self._error_body("The server encountered an error", "SERVER_ERROR"), "error"
        else:
            with self.lock:
                status, answer, kind = self._route(request.command, path, query, body)
        if kind is not None:
            self._check(f"{request.command} {path} -> {status}", shape_errors(kind, answer))
        with self.lock:
            self.calls.append(Call(request.command, path, body, status))
        if f"{request.command} {path}" in self.lose_answers:
            request.close_connection = True
            request.connection.shutdown(2)
            return
        data = json.dumps(answer).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(data)

    @staticmethod
    def _send_file(request: BaseHTTPRequestHandler, name: str, content_type: str) -> None:
        data = (_CHECKOUT_JS / name).read_bytes()
        request.send_response(200)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(data)))
        request.send_header("Cache-Control", "no-store")
        request.end_headers()
        request.wfile.write(data)

    def _checkout_call(self, path: str) -> bool:
        parts = path[len(self.PREFIX):].strip("/").split("/")
        return parts == ["payments", "create", "checkout"] or (
            len(parts) == 4 and parts[0] == "payments" and parts[2:] == ["otp", "submit"])

    def _checkout_route(self, path: str, body: Any) -> tuple[int, Any, str]:
        """The checkout frame's two calls (the module docstring)."""
        parts = path[len(self.PREFIX):].strip("/").split("/")
        if not isinstance(body, dict):
            return self._bad("The request body is not JSON.")
        if parts[1] == "create":
            if body.get("key_id") != self.key_id:
                return 401, self._error_body("Authentication failed"), "error"
            order = self.orders.get(str(body.get("order_id") or ""))
            if order is None:
                return self._bad("The id provided does not exist", "order_id")
            card = body.get("card") if isinstance(body.get("card"), dict) else {}
            number = str(card.get("number") or "")
            if not (number.isdigit() and 12 <= len(number) <= 19):
                return self._bad("Your payment didn't go through as it was declined by the bank.", "card[number]")
            contact = "".join(ch for ch in str(body.get("contact") or "") if ch.isdigit())[-10:]
            status, created, kind = self._create_payment("json", {name: value for name, value in {
                "amount": order["amount"], "currency": "INR", "order_id": order["id"], "method": "card",
                "contact": contact or None, "email": body.get("email") or None,
                "card": {"last4": number[-4:]}}.items() if value is not None})
            if status != 200:
                return status, created, kind
            payment_id = created["razorpay_payment_id"]
            return 200, {"razorpay_payment_id": payment_id, "next": [
                {"action": "otp_submit", "url": f"{self.base_url}/payments/{payment_id}/otp/submit"}]}, "s2s_created"
        payment = self.payments.get(parts[1])
        if payment is None or payment["method"] != "card" or payment["status"] != "created":
            return self._bad("The payment is not waiting for an OTP", "payment_id")
        if str(body.get("otp") or "") != CARD_OTP:
            self.settle_payment("", "failed", notify=False, payment_id=payment["id"])
            answer = self._error_body("Payment failed", field=None)
            answer["error"].update(source="customer", step="payment_authentication", reason="payment_failed",
                                   metadata={"payment_id": payment["id"], "order_id": payment["order_id"]})
            return 400, answer, "error"
        snapshot = self.settle_payment("", "authorized", notify=False, payment_id=payment["id"])
        if self.webhook_url:  # Razorpay's webhook comes on its own, not inside the checkout's answer
            threading.Thread(target=self.send_webhook, args=(self.payment_webhook(snapshot, "payment.authorized"),),
                             daemon=True).start()
        return 200, {"razorpay_payment_id": payment["id"], "razorpay_order_id": payment["order_id"],
                     "razorpay_signature": checkout_signature(self.key_secret, payment["order_id"], payment["id"])}, \
            "checkout_response"

    @staticmethod
    def _error_body(description: str, code: str = "BAD_REQUEST_ERROR", field: str | None = None) -> dict:
        return {"error": {"code": code, "description": description, "field": field, "source": None,
                          "step": None, "reason": None, "metadata": {}}}

    def _bad(self, description: str, field: str | None = None, status: int = 400) -> tuple[int, dict, str]:
        return status, self._error_body(description, field=field), "error"

    def _route(self, method: str, path: str, query: dict, body: Any) -> tuple[int, Any, str | None]:
        if not path.startswith(self.PREFIX):
            return self._bad("The requested URL was not found on the server.", status=404)
        parts = path[len(self.PREFIX):].strip("/").split("/")
        if method == "GET" and parts == ["settlements", "recon", "combined"]:
            skip, count = int(query.get("skip", 0)), int(query.get("count", 10))
            items = [dict(line) for line in self.recon_lines][skip:skip + count]
            return 200, {"entity": "collection", "count": len(items), "items": items}, "recon_collection"
        if method == "GET" and len(parts) == 2 and parts[0] == "settlements":
            found = next((s for s in self.settlements if s["id"] == parts[1]), None)
            if found is None:
                return self._bad("The id provided does not exist", "id")
            return 200, dict(found), "settlement"
        if method == "GET" and parts == ["settlements"]:
            skip, count = int(query.get("skip", 0)), int(query.get("count", 10))
            items = [dict(s) for s in self.settlements
                     if int(query.get("from", 0)) <= s["created_at"] <= int(query.get("to", 2**40))][skip:skip + count]
            return 200, {"entity": "collection", "count": len(items), "items": items}, "settlement_collection"
        if method == "POST" and parts == ["orders"]:
            return self._create_order(body)
        if method == "GET" and parts == ["orders"]:
            items = [self._public(o) for o in self.orders.values()
                     if "receipt" not in query or o["receipt"] == query["receipt"]]
            return 200, {"entity": "collection", "count": len(items), "items": items}, "order_collection"
        if method == "GET" and len(parts) == 3 and parts[0] == "orders" and parts[2] == "payments":
            if parts[1] not in self.orders:
                return self._bad("The id provided does not exist", "id")
            items = sorted((self._public(p) for p in self.payments.values() if p["order_id"] == parts[1]),
                           key=lambda p: p["created_at"])
            return 200, {"entity": "collection", "count": len(items), "items": items}, "payment_collection"
        if method == "POST" and parts[:2] == ["payments", "create"] and len(parts) == 3 and parts[2] in ("upi", "json"):
            return self._create_payment(parts[2], body)
        if len(parts) >= 2 and parts[0] == "payments":
            payment = self.payments.get(parts[1])
            if payment is None:
                return self._bad("The id provided does not exist", "id")
            if method == "GET" and len(parts) == 2:
                return 200, self._public(payment), "payment"
            if method == "POST" and parts[2:] == ["capture"]:
                return self._capture(payment, body)
            if method == "POST" and parts[2:] == ["refund"]:
                return self._create_refund(payment, body)
            if method == "GET" and parts[2:] == ["refunds"]:
                items = [dict(r) for r in self.refunds.values() if r["payment_id"] == payment["id"]]
                return 200, {"entity": "collection", "count": len(items), "items": items}, "refund_collection"
        return self._bad("The requested URL was not found on the server.", status=404)

    def _create_order(self, body: Any) -> tuple[int, Any, str]:
        if not isinstance(body, dict) or not isinstance(body.get("amount"), int) or isinstance(body.get("amount"), bool):
            return self._bad("The amount must be an integer.", "amount")
        if body["amount"] < 100:
            return self._bad("The amount must be atleast INR 1.00", "amount")
        if body.get("currency") != "INR":
            return self._bad("The currency field is required.", "currency")
        order = {"id": self._id("order_"), "entity": "order", "amount": body["amount"], "amount_paid": 0,
                 "amount_due": body["amount"], "currency": "INR", "receipt": body.get("receipt"), "offer_id": None,
                 "status": "created", "attempts": 0, "notes": body.get("notes") or [], "created_at": self._now()}
        self.orders[order["id"]] = order
        return 200, dict(order), "order"

    _seq = itertools.count()

    def _create_payment(self, kind: str, body: Any) -> tuple[int, Any, str]:
        if self.refuse_payments:
            return self._bad("Payment processing failed because of incorrect data from the customer")
        if not isinstance(body, dict):
            return self._bad("The request body is not JSON.")
        for name in ("amount", "currency", "order_id", "contact", "method"):
            if name not in body:
                return self._bad(f"The {name} field is required.", name)
        order = self.orders.get(body["order_id"])
        if order is None:
            return self._bad("The id provided does not exist", "order_id")
        if order["status"] == "paid":
            return self._bad("Order has already been paid", "order_id")
        if body["amount"] != order["amount"]:
            return self._bad("The amount must match the order's amount", "amount")
        method = body["method"]
        if (kind == "upi") != (method == "upi") or method not in ("upi", "card", "netbanking", "wallet"):
            return self._bad("Invalid payment method given", "method")
        upi = body.get("upi") if isinstance(body.get("upi"), dict) else {}
        if method == "upi" and upi.get("flow") not in ("intent", "collect"):
            return self._bad("Invalid upi flow", "upi.flow")
        if method == "upi" and upi.get("flow") == "collect" and not upi.get("vpa"):
            return self._bad("The vpa field is required.", "vpa")
        if method == "card" and not isinstance(body.get("card"), dict):
            return self._bad("The card field is required.", "card")
        if method == "netbanking" and not body.get("bank"):
            return self._bad("The bank field is required.", "bank")
        if method == "wallet" and body.get("wallet") not in ("phonepe", "amazonpay", "mobikwik"):
            return self._bad("Invalid wallet", "wallet")
        payment = {"id": self._id("pay_"), "entity": "payment", "amount": order["amount"], "currency": "INR",
                   "status": "created", "order_id": order["id"], "invoice_id": None, "international": False,
                   "method": method, "amount_refunded": 0, "refund_status": None, "captured": False,
                   "description": None, "card_id": self._id("card_") if method == "card" else None,
                   "bank": body.get("bank"), "wallet": body.get("wallet"),
                   "vpa": upi.get("vpa") if method == "upi" else None,
                   "email": body.get("email"), "contact": "+91" + str(body["contact"]),
                   "notes": body.get("notes") or [], "fee": None, "tax": None, "error_code": None,
                   "error_description": None, "error_source": None, "error_step": None, "error_reason": None,
                   "acquirer_data": {}, "created_at": self._now(), "_seq": next(self._seq)}
        self.payments[payment["id"]] = payment
        order["status"], order["attempts"] = "attempted", order["attempts"] + 1
        answer: dict = {"razorpay_payment_id": payment["id"]}
        if method == "upi" and upi["flow"] == "intent":
            answer["link"] = (f"upi://pay?pa=razorpay.double@icici&pn=Double&tr={payment['id']}"
                              f"&am={order['amount'] // 100}.{order['amount'] % 100:02d}&cu=INR&mc=5411")
        elif method != "upi":
            base = self.base_url
            answer["next"] = [{"action": "redirect", "url": f"{base}/payments/{payment['id']}/authenticate"}]
        return 200, answer, "s2s_created"

    def _capture(self, payment: dict, body: Any) -> tuple[int, Any, str]:
        if payment["status"] != "authorized":
            return self._bad("This payment has already been captured" if payment["status"] == "captured"
                             else "Only payments which have been authorized and not yet captured can be captured")
        if (body or {}).get("amount") != payment["amount"]:
            return self._bad("Capture amount must be equal to the amount authorized", "amount")
        payment["status"], payment["captured"] = "captured", True
        order = self.orders[payment["order_id"]]
        order["status"], order["amount_paid"], order["amount_due"] = "paid", order["amount"], 0
        return 200, self._public(payment), "payment"

    def _create_refund(self, payment: dict, body: Any) -> tuple[int, Any, str]:
        if payment["status"] not in ("captured", "refunded"):
            return self._bad("The payment has not been captured", "payment_id")
        amount = (body or {}).get("amount", payment["amount"] - payment["amount_refunded"])
        if not isinstance(amount, int) or amount <= 0 or amount > payment["amount"] - payment["amount_refunded"]:
            return self._bad("The refund amount provided is greater than amount captured", "amount")
        refund = {"id": self._id("rfnd_"), "entity": "refund", "amount": amount, "currency": "INR",
                  "payment_id": payment["id"], "notes": (body or {}).get("notes") or [],
                  "receipt": (body or {}).get("receipt"), "acquirer_data": {"arn": None}, "created_at": self._now(),
                  "batch_id": None, "status": "pending", "speed_processed": "normal",
                  "speed_requested": (body or {}).get("speed", "normal")}
        self.refunds[refund["id"]] = refund
        payment["amount_refunded"] += amount
        payment["refund_status"] = "full" if payment["amount_refunded"] == payment["amount"] else "partial"
        if payment["refund_status"] == "full":
            payment["status"] = "refunded"
        return 200, dict(refund), "refund"


# -- the fixture ---------------------------------------------------------------------------------

def _fixture():
    import pytest

    @pytest.fixture
    def razorpay_double(settings):
        """The double, started, with the gateway configured for Razorpay pointing at it. Fails the
        test if any answer or webhook of the double broke our schema of Razorpay's shapes."""
        from payments.acquirer import _load

        double = RazorpayDouble().start()
        settings.GATEWAY_ACQUIRER = "razorpay"
        settings.RAZORPAY_KEY_ID = double.key_id
        settings.RAZORPAY_KEY_SECRET = double.key_secret
        settings.RAZORPAY_WEBHOOK_SECRET = double.webhook_secret
        settings.RAZORPAY_BASE_URL = double.base_url
        _load.cache_clear()
        try:
            yield double
        finally:
            double.stop()
            _load.cache_clear()
        assert not double.violations, f"answers our schema of Razorpay's shapes does not allow: {double.violations}"

    return razorpay_double


razorpay_double = _fixture()
