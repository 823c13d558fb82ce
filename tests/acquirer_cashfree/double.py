"""A stateful double of Cashfree's Payment Gateway, for flow tests: a real HTTP server on
loopback that keeps orders, payments and refunds in memory.

Prism (conftest.py) checks every request against Cashfree's description but answers from its
examples, statelessly: an order created is not there to be read back, a payment never settles.
This double remembers, and lets a test play Cashfree's side of a flow: settle a payment or a
refund (`settle_payment`, `settle_refund`) and deliver the signed webhook Cashfree would send
(`send_webhook`), or hold it back (a lost webhook).

What it holds itself to: EVERY answer it gives, and every webhook it sends, is validated
against the response schemas (and webhook schemas) of the same vendored description,
unmodified. A violation is recorded in `violations` and the `cashfree_double` fixture fails
the test on any. Two places where Cashfree's description contradicts itself are avoided, not
patched: PaymentEntity.payment_method (a oneOf whose branches all match, or none) and nulls
where the schema asks for an object are left out of its answers, as the description allows.

For the browser it also plays Cashfree's two pages a customer meets in the card fields' flow
(not API calls, so not checked against the description): Cashfree.js, a local stand-in with the
real script's interface (tests/acquirer_cashfree/cashfree_js/, at /js/v3/cashfree.js), whose
fields pay by the order pay below; and the issuer's 3-D Secure page a card's order pay links to
(/pg/view/card/{cf_payment_id}): OTP 123456 settles the payment SUCCESS, any other FAILED, then
the customer goes to the order's return_url, as Cashfree sends it. `seen` keeps every request
body the double received, for a test that follows the card number.

It answers the endpoints client.py calls: POST /orders, GET /orders/{order_id},
GET /orders/{order_id}/payments, POST /orders/sessions, POST /orders/{order_id}/refunds,
GET /orders/{order_id}/refunds/{refund_id}, POST /settlements and POST /settlement/recon (the
payouts `settle` makes of what it approved), with Cashfree's headers: x-client-id and
x-client-secret where the description secures the call, x-api-version on every call, and
x-idempotency-key (the same key with the same body answers the first answer again; with
another body 422 idempotency_error).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

ROOT = Path(__file__).resolve().parents[2]
_DESCRIPTION_URI = "urn:cashfree-pg:openapi"
_IST = timezone(timedelta(hours=5, minutes=30))


def description_path() -> Path:
    """Cashfree's description, vendored unmodified in vendor/cashfree-pg (see its PROVENANCE.md)."""
    return ROOT / "vendor" / "cashfree-pg" / "openapi.yaml"


def _jsonable(value: Any) -> Any:
    # YAML reads the examples' timestamps as datetimes; the schemas never need them as such.
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, (datetime,)) or type(value).__name__ == "date":
        return str(value)
    return value


class Description:
    """Cashfree's OpenAPI 3.0 description, its schemas read as JSON Schema draft 4 (which
    OpenAPI 3.0's schema object extends; its extra keywords, example and the like, are
    annotations a validator ignores)."""

    def __init__(self, path: Path):
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: seconds, not tens of them
        self.document = _jsonable(yaml.load(path.read_text(), Loader=loader))
        resource = Resource(contents=self.document, specification=DRAFT4)
        self.registry = Registry().with_resource(_DESCRIPTION_URI, resource)

    def _pointer(self, *parts: str) -> str:
        escaped = (part.replace("~", "~0").replace("/", "~1") for part in parts)
        return _DESCRIPTION_URI + "#/" + "/".join(quote(part, safe="~") for part in escaped)

    def response_errors(self, method: str, template: str, status: int, body: Any) -> list[str]:
        """Why `body` is not an answer the description allows to `method template` with
        `status` (empty: it is). A status the description does not list is itself an error."""
        responses = self.document["paths"][template][method.lower()]["responses"]
        if str(status) not in responses:
            return [f"{method} {template} has no {status} answer in the description"]
        ref = self._pointer("paths", template, method.lower(), "responses", str(status), "content",
                            "application/json", "schema")
        return self._errors(ref, body)

    def schema_errors(self, schema_name: str, body: Any) -> list[str]:
        return self._errors(self._pointer("components", "schemas", schema_name), body)

    def _errors(self, ref: str, body: Any) -> list[str]:
        validator = jsonschema.Draft4Validator({"$ref": ref}, registry=self.registry)
        return [f"{'/'.join(map(str, error.absolute_path)) or '(body)'}: {error.message}"
                for error in validator.iter_errors(body)]


@lru_cache(maxsize=1)
def description() -> Description:
    return Description(description_path())  # 1 MB of YAML: read once per test session


def rupees(paise: int) -> float:
    value = Decimal(paise) / 100
    return float(value)


def paise(amount: Any) -> int:
    return int(Decimal(str(amount)) * 100)


def _now() -> str:
    return datetime.now(_IST).isoformat(timespec="seconds")


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """What Cashfree puts in x-webhook-signature (its docs: Base64 HMAC-SHA256 of the timestamp
    and the raw body). Written out here again, not imported, so that the test does not check
    the gateway's verification against itself."""
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()


@dataclass
class Call:
    method: str
    path: str
    headers: dict
    body: Any
    status: int


@dataclass
class Delivery:
    """A webhook the double sent, and what our endpoint answered."""

    body: bytes
    headers: dict
    status: int
    answer: Any


# Which routes exist, and which of them the description secures (order pay is authorised by
# its payment session id alone).
_ROUTES = [
    ("POST", re.compile(r"^/orders$"), "/orders", True),
    ("POST", re.compile(r"^/orders/sessions$"), "/orders/sessions", False),
    ("GET", re.compile(r"^/orders/(?P<order_id>[^/]+)$"), "/orders/{order_id}", True),
    ("GET", re.compile(r"^/orders/(?P<order_id>[^/]+)/payments$"), "/orders/{order_id}/payments", True),
    ("POST", re.compile(r"^/orders/(?P<order_id>[^/]+)/refunds$"), "/orders/{order_id}/refunds", True),
    ("GET", re.compile(r"^/orders/(?P<order_id>[^/]+)/refunds/(?P<refund_id>[^/]+)$"),
     "/orders/{order_id}/refunds/{refund_id}", True),
    ("POST", re.compile(r"^/simulate$"), "/simulate", True),
]
# Disputes (docs/disputes.md): the double keeps them too, and answers these four as Cashfree would.
_ROUTES += [
    ("GET", re.compile(r"^/orders/(?P<order_id>[^/]+)/disputes$"), "/orders/{order_id}/disputes", True),
    ("GET", re.compile(r"^/disputes/(?P<dispute_id>[^/]+)$"), "/disputes/{dispute_id}", True),
    ("PUT", re.compile(r"^/disputes/(?P<dispute_id>[^/]+)/accept$"), "/disputes/{dispute_id}/accept", True),
    ("POST", re.compile(r"^/disputes/(?P<dispute_id>[^/]+)/documents$"), "/disputes/{dispute_id}/documents", True),
]
# Settlements (docs/settlements.md): the double pays out what it approved (`settle`), and answers
# the two reads the client makes. Paged as Cashfree's guides page them ({cursor, limit, data});
# the description's SettlementEntity allows the extra keys.
_ROUTES += [
    ("POST", re.compile(r"^/settlements$"), "/settlements", True),
    ("POST", re.compile(r"^/settlement/recon$"), "/settlement/recon", True),
]
_DISPUTE_WEBHOOK = {"CREATED": "DISPUTE_CREATED", "MERCHANT_WON": "DISPUTE_CLOSED", "MERCHANT_LOST": "DISPUTE_CLOSED",
                    "MERCHANT_ACCEPTED": "DISPUTE_CLOSED"}
_GROUPS = {"upi": "upi", "card": "credit_card", "netbanking": "net_banking", "app": "wallet",
           "banktransfer": "bank_transfer"}
# The Cashfree.js stand-in's files, served at /js/v3/<name> (the real script's path).
_CASHFREE_JS = Path(__file__).resolve().parent / "cashfree_js"
_JS_FILES = {"cashfree.js": "text/javascript; charset=utf-8", "field.html": "text/html; charset=utf-8"}
_ISSUER_PAGE = re.compile(r"^/pg/view/card/(?P<cf_payment_id>[0-9]+)$")
ISSUER_OTP = "123456"


class CashfreeDouble:
    """Start with `start()` (or use the fixture); `base_url` is what CASHFREE_BASE_URL gets."""

    PREFIX = "/pg"

    def __init__(self, *, client_id: str, client_secret: str, webhook_secret: str | None = None):
        self.client_id, self.client_secret = client_id, client_secret
        self.webhook_secret = webhook_secret or client_secret
        self.webhook_url = ""
        self.orders: dict[str, dict] = {}
        self.payments: dict[str, dict] = {}        # cf_payment_id -> PaymentEntity
        self.refunds: dict[tuple, dict] = {}       # (order_id, refund_id) -> RefundEntity
        self.disputes: dict[str, dict] = {}        # dispute_id -> DisputesEntity (+ "_documents")
        self.settlements: dict[str, dict] = {}     # cf_settlement_id -> SettlementEntity (+ "_events")
        self._settled: set[str] = set()            # cf_payment_ids and cf_refund_ids paid out or deducted
        self.sessions: dict[str, str] = {}         # payment_session_id -> order_id
        self.idempotency: dict[str, tuple] = {}    # key -> (body, status, answer)
        self.calls: list[Call] = []
        self.seen: list[bytes] = []                # every request body received, API or page
        self.deliveries: list[Delivery] = []
        self.violations: list[str] = []
        self.unavailable = False                   # True: every call answers 500 api_error
        self.throttled: int | None = None          # seconds: every call answers 429 with x-ratelimit-retry
        self.lock = threading.RLock()
        self._ids = itertools.count(4100000001)
        self._server: ThreadingHTTPServer | None = None

    # -- life -----------------------------------------------------------------------------------

    def start(self) -> "CashfreeDouble":
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                double._handle(self)

            def do_POST(self):
                double._handle(self)

            def do_PUT(self):
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
    def cashfree_js_url(self) -> str:
        """Where the stand-in of Cashfree.js is served (CASHFREE_JS_URL in a test)."""
        return f"{self.origin}/js/v3/cashfree.js"

    # -- Cashfree's side of a flow ---------------------------------------------------------------

    def newest_payment(self, order_id: str) -> dict:
        with self.lock:
            ids = self.orders[order_id]["_payments"]
            if not ids:
                raise LookupError(f"order {order_id} has no payment attempt")
            return self.payments[ids[-1]]

    def settle_payment(self, order_id: str, status: str = "SUCCESS", *, notify: bool = True,
                       bank_reference: str | None = None, message: str = "") -> dict:
        """The newest attempt of the order ends `status` (SUCCESS, FAILED, USER_DROPPED ...);
        with `notify`, the webhook Cashfree sends for it is delivered (see `deliveries`)."""
        with self.lock:
            payment = self.newest_payment(order_id)
            payment["payment_status"] = status
            payment["payment_completion_time"] = _now()
            if status == "SUCCESS":
                # bank_reference="": Cashfree's success carries none (it is optional).
                if bank_reference is None:
                    bank_reference = f"{int(payment['cf_payment_id']) % 10**12:012d}"
                if bank_reference:
                    payment["bank_reference"] = bank_reference
                payment["payment_message"] = message or "00::Transaction success"
                payment["is_captured"] = True
                self.orders[order_id]["order_status"] = "PAID"
            else:
                payment["payment_message"] = message or "Transaction declined"
                payment["error_details"] = {"error_code": "TRANSACTION_DECLINED", "error_reason": "auth_declined",
                                            "error_description": message or "declined by the bank",
                                            "error_source": "bank"}
            snapshot = json.loads(json.dumps(payment))
        if notify:
            self.send_webhook(self.payment_webhook(order_id, snapshot))
        return snapshot

    def settle(self, *, fee_bp: int = 190, tax_percent: int = 18, utr: str | None = None) -> dict:
        """Cashfree pays out: every SUCCESS payment not paid out yet, less `fee_bp` basis points
        of it and `tax_percent` % GST on that fee (each rounded half up to the paisa), less every
        SUCCESS refund not deducted yet, in one settlement under `utr`. Its events are what
        `POST /settlement/recon` answers. Returns the SettlementEntity."""
        with self.lock:
            cf_settlement_id = str(next(self._ids))
            utr = utr or f"N{int(cf_settlement_id) % 10**10:010d}"
            now = _now()
            events, gross, fees, tax, refunds = [], 0, 0, 0, 0
            for payment in self.payments.values():
                if payment["payment_status"] != "SUCCESS" or payment["cf_payment_id"] in self._settled:
                    continue
                self._settled.add(payment["cf_payment_id"])
                amount = paise(payment["payment_amount"])
                fee = (amount * fee_bp + 5_000) // 10_000
                gst = (fee * tax_percent + 50) // 100
                gross, fees, tax = gross + amount, fees + fee, tax + gst
                events.append(self._recon_event(cf_settlement_id, utr, now, "PAYMENT", "CREDIT", amount, fee, gst,
                                                payment["order_id"], payment["cf_payment_id"]))
            for (order_id, refund_id), refund in self.refunds.items():
                if refund.get("refund_status") != "SUCCESS" or refund["cf_refund_id"] in self._settled:
                    continue
                self._settled.add(refund["cf_refund_id"])
                amount = paise(refund["refund_amount"])
                refunds += amount
                events.append(self._recon_event(cf_settlement_id, utr, now, "REFUND", "DEBIT", amount, 0, 0,
                                                order_id, refund["cf_payment_id"], refund_id=refund_id))
            entity = {"cf_settlement_id": cf_settlement_id, "entity": "settlement", "order_amount": rupees(gross),
                      "service_charge": rupees(fees), "service_tax": rupees(tax),
                      "settlement_amount": rupees(gross - fees - tax - refunds), "settlement_currency": "INR",
                      "transfer_id": int(cf_settlement_id) % 10**6, "transfer_time": now, "transfer_utr": utr,
                      "_events": events}
            self.settlements[cf_settlement_id] = entity
            return {k: v for k, v in entity.items() if k != "_events"}

    @staticmethod
    def _recon_event(cf_settlement_id, utr, when, event_type, sale_type, amount, fee, tax, order_id, cf_payment_id,
                     *, refund_id: str = "") -> dict:
        event = {
            "event_details": {"entity": "recon", "event_id": f"{cf_settlement_id}-{event_type}-{refund_id or cf_payment_id}",
                              "event_type": event_type, "sale_type": sale_type, "event_status": "SUCCESS",
                              "event_amount": rupees(amount), "event_service_charge": rupees(fee),
                              "event_service_tax": rupees(tax), "event_currency": "INR", "event_time": when,
                              "event_settlement_amount": rupees(amount - fee - tax if sale_type == "CREDIT" else amount)},
            "order_details": {"order_id": order_id, "order_currency": "INR"},
            "payment_details": {"cf_payment_id": cf_payment_id, "payment_currency": "INR"},
            "settlement_details": {"cf_settlement_id": cf_settlement_id, "utr": utr, "settlement_date": when},
        }
        if refund_id:
            event["refund_details"] = {"refund_id": refund_id}
        return event

    def settle_refund(self, order_id: str, refund_id: str, status: str = "SUCCESS", *,
                      notify: bool = True, arn: str | None = None) -> dict:
        """The refund ends `status`; a SUCCESS carries the bank's `arn` (default: one made up;
        "": none, as Cashfree may send it)."""
        with self.lock:
            refund = self.refunds[(order_id, refund_id)]
            refund["refund_status"] = status
            refund["processed_at"] = _now()
            if status == "SUCCESS":
                arn = f"ARN{refund['cf_refund_id']}" if arn is None else arn
                if arn:
                    refund["refund_arn"] = arn
                refund["status_description"] = "Refund processed"
            else:
                refund["status_description"] = "Refund cancelled by the bank"
            snapshot = json.loads(json.dumps(refund))
        if notify:
            self.send_webhook(self.refund_webhook(snapshot))
        return snapshot

    def payment_webhook(self, order_id: str, payment: dict) -> dict:
        order = self.orders[order_id]
        kind = {"SUCCESS": "PAYMENT_SUCCESS_WEBHOOK", "USER_DROPPED": "PAYMENT_USER_DROPPED_WEBHOOK"}.get(
            payment["payment_status"], "PAYMENT_FAILED_WEBHOOK")
        data = {"order": {"order_id": order_id, "order_amount": order["order_amount"], "order_currency": "INR"},
                "payment": {k: v for k, v in payment.items() if k != "entity"},
                "customer_details": {k: v for k, v in order["customer_details"].items()},
                "payment_gateway_details": {"gateway_name": "CASHFREE", "gateway_order_id": order["cf_order_id"],
                                            "gateway_payment_id": payment["cf_payment_id"]}}
        if "error_details" in payment:
            data["error_details"] = payment["error_details"]
        return {"data": data, "event_time": _now(), "type": kind}

    # -- disputes: a customer disputes a payment; Cashfree's side of its life --------------------

    def open_dispute(self, order_id: str, *, dispute_type: str = "CHARGEBACK", amount: int | None = None,
                     respond_by: datetime | None = None, notify: bool = True) -> dict:
        """A dispute against the order's paid attempt, needing the merchant's answer by
        `respond_by` (default: 7 days); with `notify`, its DISPUTE_CREATED webhook is delivered."""
        with self.lock:
            order = self.orders[order_id]
            paid = next(p for p in (self.payments[i] for i in order["_payments"]) if p["payment_status"] == "SUCCESS")
            dispute_id = str(next(self._ids))
            respond_by = respond_by or datetime.now(_IST) + timedelta(days=7)
            entity = {
                "dispute_id": int(dispute_id), "dispute_type": dispute_type, "reason_code": "13.1",
                "reason_description": "Merchandise / Services Not Received",
                "dispute_amount": rupees(amount) if amount is not None else order["order_amount"],
                "dispute_amount_currency": "INR", "created_at": _now(), "updated_at": _now(),
                "respond_by": respond_by.astimezone(_IST).isoformat(timespec="seconds"),
                "resolved_at": "9999-09-09T00:00:00", "dispute_status": f"{dispute_type}_CREATED",
                "cf_dispute_remarks": "Dispute is created, please take action",
                "preferred_evidence": [{"document_type": "Delivery/Service Proof",
                                        "document_description": "Proof that the customer received the goods."},
                                       {"document_type": "Refund Proof",
                                        "document_description": "Proof that the amount was refunded."}],
                "dispute_evidence": [],
                "order_details": {"order_id": order_id, "order_currency": "INR", "order_amount": order["order_amount"],
                                  "cf_payment_id": paid["cf_payment_id"], "payment_currency": "INR",
                                  "payment_amount": paid["payment_amount"]},
                "customer_details": {"customer_name": order["customer_details"].get("customer_name") or "Asha Rao",
                                     "customer_phone": order["customer_details"].get("customer_phone") or "9876543210",
                                     "customer_email": order["customer_details"].get("customer_email")
                                     or "asha@example.in"},
            }
            self.disputes[dispute_id] = entity
            snapshot = json.loads(json.dumps(entity, default=str))
        if notify:
            self.send_webhook(self.dispute_webhook(snapshot))
        return snapshot

    def move_dispute(self, dispute_id: str, stage: str, *, notify: bool = True) -> dict:
        """The dispute reaches `stage` (DOCS_RECEIVED, UNDER_REVIEW, MERCHANT_WON, MERCHANT_LOST,
        INSUFFICIENT_EVIDENCE ...), its type kept; with `notify`, its webhook is delivered."""
        with self.lock:
            entity = self.disputes[str(dispute_id)]
            entity["dispute_status"] = f"{entity['dispute_type']}_{stage}"
            entity["updated_at"] = _now()
            if stage.startswith("MERCHANT_"):
                entity["resolved_at"] = _now()
            snapshot = json.loads(json.dumps(entity, default=str))
        if notify:
            self.send_webhook(self.dispute_webhook(snapshot))
        return snapshot

    def dispute_webhook(self, entity: dict, kind: str | None = None) -> dict:
        """Cashfree's dispute webhook (its docs' sample: data.dispute, data.order_details,
        data.customer_details; `dispute_action_on` beside the entity's fields)."""
        stage = entity["dispute_status"][len(entity["dispute_type"]) + 1:]
        dispute = {k: v for k, v in entity.items() if k not in ("order_details", "customer_details",
                                                                "preferred_evidence", "dispute_evidence")}
        dispute["dispute_action_on"] = "MERCHANT" if stage in ("CREATED", "INSUFFICIENT_EVIDENCE") else "CASHFREE"
        return {"data": {"dispute": dispute, "order_details": entity["order_details"],
                         "customer_details": entity["customer_details"]},
                "event_time": _now(), "type": kind or _DISPUTE_WEBHOOK.get(stage, "DISPUTE_UPDATED")}

    def settlement_webhook(self, cf_settlement_id: str) -> dict:
        """The description's SettlementWebhook of a payout `settle` made."""
        entity = {k: v for k, v in self.settlements[str(cf_settlement_id)].items() if k != "_events"}
        return {"data": {"settlement": entity}, "event_time": _now(), "type": "SETTLEMENT_WEBHOOK"}

    def refund_webhook(self, refund: dict) -> dict:
        return {"data": {"refund": refund}, "event_time": _now(), "type": "REFUND_STATUS_WEBHOOK"}

    def send_webhook(self, payload: dict, *, timestamp: str | None = None, secret: str | None = None,
                     body: bytes | None = None, url: str | None = None) -> Delivery:
        """POST `payload` to `url` (default: webhook_url), signed as Cashfree signs; checked
        against the description's PaymentWebhook / RefundWebhook schema first. `body` sends
        those exact bytes instead (a replay); `timestamp` and `secret` forge or age it."""
        if "dispute" in payload.get("data", {}):
            # The description has no dispute webhook schema: its dispute is the DisputesEntity of
            # the dispute calls (with Cashfree's dispute_action_on beside it), checked as that.
            data = payload["data"]
            entity = {**{k: v for k, v in data["dispute"].items() if k != "dispute_action_on"},
                      "order_details": data["order_details"], "customer_details": data["customer_details"]}
            self._check(f"webhook {payload.get('type')}", description().schema_errors("DisputesEntity", entity))
        elif "settlement" in payload.get("data", {}):
            self._check(f"webhook {payload.get('type')}", description().schema_errors("SettlementWebhook", payload))
        else:
            schema = "RefundWebhook" if "refund" in payload.get("data", {}) else "PaymentWebhook"
            self._check(f"webhook {payload.get('type')}", description().schema_errors(schema, payload))
        body = body if body is not None else json.dumps(payload, separators=(",", ":")).encode()
        timestamp = timestamp or str(int(time.time() * 1000))
        headers = {"Content-Type": "application/json", "x-webhook-timestamp": timestamp,
                   "x-webhook-signature": sign(secret or self.webhook_secret, timestamp, body),
                   "x-webhook-version": "2025-01-01", "x-webhook-attempt": "1"}
        parts = urlsplit(url or self.webhook_url)
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

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        path = unquote(urlsplit(request.path).path)
        with self.lock:
            self.seen.append(raw)
        if path.startswith("/js/v3/"):
            return self._js_file(request, path.removeprefix("/js/v3/"))
        if (page := _ISSUER_PAGE.match(path)) is not None:
            return self._issuer_page(request, page["cf_payment_id"], raw)
        headers = {key.lower(): value for key, value in request.headers.items()}
        try:
            body = json.loads(raw, parse_float=Decimal) if raw else None
        except ValueError:
            body = None
        if headers.get("content-type", "").startswith("multipart/form-data"):
            body = _form_fields(headers["content-type"], raw)
        if self.throttled is not None:
            status, answer, template = 429, {"message": "Too many requests", "code": "request_limit_exceeded",
                                             "type": "rate_limit_error"}, None
        else:
            status, answer, template = self._route(request.command, path, headers, body)
        if template is not None:
            self._check(f"{request.command} {template} -> {status}",
                        description().response_errors(request.command, template, status, answer))
        with self.lock:
            self.calls.append(Call(request.command, path, {k: v for k, v in headers.items()
                                                           if k != "x-client-secret"}, body, status))
        data = json.dumps(answer, default=str).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.send_header("x-request-id", headers.get("x-request-id", ""))
        request.send_header("x-api-version", headers.get("x-api-version", ""))
        if status == 429:
            request.send_header("x-ratelimit-retry", str(self.throttled))
            request.send_header("x-ratelimit-remaining", "0")
        request.end_headers()
        request.wfile.write(data)

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str,
              headers: dict | None = None) -> None:
        request.send_response(status)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(body)

    def _js_file(self, request: BaseHTTPRequestHandler, name: str) -> None:
        if request.command != "GET" or name not in _JS_FILES:
            return self._send(request, 404, b"not found", "text/plain")
        return self._send(request, 200, (_CASHFREE_JS / name).read_bytes(), _JS_FILES[name],
                          {"Cache-Control": "no-store"})

    def _issuer_page(self, request: BaseHTTPRequestHandler, cf_payment_id: str, raw: bytes) -> None:
        """The issuer's 3-D Secure page of a card payment: GET shows the OTP form; POST settles
        the payment as the OTP says and sends the customer to the order's return_url."""
        with self.lock:
            payment = self.payments.get(cf_payment_id)
            order = self.orders.get(payment["order_id"]) if payment else None
        if payment is None or payment["payment_group"] != "credit_card":
            return self._send(request, 404, b"no such card payment", "text/plain")
        if request.command == "GET":
            page = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Issuer 3-D Secure</title></head>'
                    f'<body><h1>Your bank: confirm the payment</h1><form method="post">'
                    f'<label for="otp">One-time password</label> <input id="otp" name="otp" inputmode="numeric">'
                    f'<button type="submit" data-issuer-submit>Confirm</button></form></body></html>')
            return self._send(request, 200, page.encode(), "text/html; charset=utf-8")
        from urllib.parse import parse_qs

        otp = (parse_qs(raw.decode("utf-8", "replace")).get("otp") or [""])[0]
        if payment["payment_status"] == "PENDING":
            self.settle_payment(payment["order_id"], "SUCCESS" if otp == ISSUER_OTP else "FAILED",
                                notify=bool(self.webhook_url))
        back = (order["order_meta"].get("return_url") or "").replace("{order_id}", order["order_id"])
        return self._send(request, 303, b"", "text/plain", {"Location": back})

    @staticmethod
    def _error(status: int, code: str, message: str, kind: str = "invalid_request_error") -> tuple[int, dict]:
        return status, {"message": message, "code": code, "type": kind}

    def _route(self, method: str, path: str, headers: dict, body: Any) -> tuple[int, Any, str | None]:
        if not path.startswith(self.PREFIX):
            return 404, {"message": "no such path", "code": "not_found", "type": "invalid_request_error"}, None
        path = path[len(self.PREFIX):]
        for route_method, pattern, template, secured in _ROUTES:
            match = pattern.match(path)
            if match is None or route_method != method:
                continue
            status, answer = self._answer(template, secured, match.groupdict(), headers, body)
            return status, answer, template
        return 404, {"message": "no such path", "code": "not_found", "type": "invalid_request_error"}, None

    def _answer(self, template: str, secured: bool, params: dict, headers: dict, body: Any) -> tuple[int, Any]:
        if not headers.get("x-api-version"):
            return self._error(400, "x-api-version_missing", "x-api-version is missing in the request")
        if secured and (headers.get("x-client-id") != self.client_id
                        or headers.get("x-client-secret") != self.client_secret):
            return 401, {"message": "authentication Failed", "code": "request_failed",
                         "type": "authentication_error"}
        if self.unavailable:
            return self._error(500, "internal_error", "something went wrong", "api_error")
        key = headers.get("x-idempotency-key")
        with self.lock:
            if key is not None and key in self.idempotency:
                first_body, status, answer = self.idempotency[key]
                if first_body != body:
                    return self._error(422, "idempotency_error", "the key was used with another request",
                                       "idempotency_error")
                return status, answer
            status, answer = getattr(self, "_" + template.strip("/").replace("/", "_")
                                     .replace("{", "").replace("}", ""))(params, body)
            if key is not None and status < 500:
                self.idempotency[key] = (body, status, answer)
            return status, json.loads(json.dumps(answer, default=str))

    # One method per route, named after its template (called with the lock held).

    @staticmethod
    def _paged(items: list, body: Any) -> dict:
        pagination = (body or {}).get("pagination") or {}
        limit = int(pagination.get("limit") or 10)
        start = int(pagination.get("cursor") or 0)
        page = {"limit": limit, "data": items[start:start + limit]}
        if start + limit < len(items):
            page["cursor"] = str(start + limit)
        return page

    def _settlements(self, params: dict, body: Any) -> tuple[int, Any]:
        filters = (body or {}).get("filters") or {}
        wanted = set(filters.get("cf_settlement_ids") or [])
        items = [{k: v for k, v in entity.items() if k != "_events"} for entity in self.settlements.values()
                 if not wanted or entity["cf_settlement_id"] in wanted]
        return 200, self._paged(items, body)

    def _settlement_recon(self, params: dict, body: Any) -> tuple[int, Any]:
        wanted = ((body or {}).get("filters") or {}).get("cf_settlement_ids") or []
        events = [event for cf_settlement_id in wanted
                  for event in self.settlements.get(str(cf_settlement_id), {}).get("_events", [])]
        return 200, self._paged(events, body)

    def _orders(self, params: dict, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or not body.get("order_id") or "order_amount" not in body:
            return self._error(400, "order_id_missing", "order_id and order_amount are required")
        order_id = body["order_id"]
        if order_id in self.orders:
            return self._error(409, "order_already_exists", "order with same id is already present")
        cf_order_id = str(next(self._ids))
        session = f"session_{hashlib.sha256(cf_order_id.encode()).hexdigest()[:40]}"
        order = {"cf_order_id": cf_order_id, "order_id": order_id, "entity": "order", "order_currency": "INR",
                 "order_amount": float(body["order_amount"]), "order_status": "ACTIVE",
                 "payment_session_id": session, "created_at": _now(),
                 "order_expiry_time": body.get("order_expiry_time") or
                 (datetime.now(_IST) + timedelta(days=30)).isoformat(timespec="seconds"),
                 "customer_details": dict(body.get("customer_details") or {}),
                 "order_meta": {k: v for k, v in (body.get("order_meta") or {}).items()},
                 "_payments": []}
        if body.get("order_note"):
            order["order_note"] = body["order_note"]
        self.orders[order_id] = order
        self.sessions[session] = order_id
        return 200, self._public(order)

    @staticmethod
    def _public(entity: dict) -> dict:
        return {k: v for k, v in entity.items() if not k.startswith("_")}

    def _orders_order_id(self, params: dict, body: Any) -> tuple[int, Any]:
        order = self.orders.get(params["order_id"])
        if order is None:
            return self._error(404, "order_not_found", "order not found")
        return 200, self._public(order)

    def _orders_order_id_payments(self, params: dict, body: Any) -> tuple[int, Any]:
        order = self.orders.get(params["order_id"])
        if order is None:
            return self._error(404, "order_not_found", "order not found")
        return 200, [self.payments[cf_id] for cf_id in order["_payments"]]

    def _orders_sessions(self, params: dict, body: Any) -> tuple[int, Any]:
        order_id = self.sessions.get((body or {}).get("payment_session_id", ""))
        if order_id is None:
            return self._error(400, "payment_session_id_invalid", "payment_session_id is not valid")
        order = self.orders[order_id]
        if order["order_status"] != "ACTIVE":
            return self._error(400, "order_inactive", f"order is {order['order_status']}")
        methods = (body or {}).get("payment_method") or {}
        if len(methods) != 1:
            return self._error(400, "payment_method_invalid", "exactly one payment_method is required")
        (method, details), = methods.items()
        if method not in _GROUPS:
            return self._error(400, "payment_method_invalid", f"{method} is not supported here")
        cf_payment_id = str(next(self._ids))
        self.payments[cf_payment_id] = {
            "cf_payment_id": cf_payment_id, "order_id": order_id, "entity": "payment", "is_captured": False,
            "order_amount": order["order_amount"], "payment_group": _GROUPS[method], "payment_currency": "INR",
            "payment_amount": order["order_amount"], "payment_time": _now(), "payment_status": "PENDING",
            "payment_message": "Transaction pending", "order_currency": "INR",
        }
        order["_payments"].append(cf_payment_id)
        channel = (details or {}).get("channel", "link")
        answer = {"payment_amount": order["order_amount"], "cf_payment_id": cf_payment_id,
                  "payment_method": method, "channel": channel}
        page = f"{self.base_url}/view/{method}/{cf_payment_id}"
        if method == "upi" and channel == "qrcode":
            answer.update(action="custom", data={"payload": {"qrcode": "data:image/png;base64,iVBORw0KGgo="}})
        elif method == "upi" and channel == "link":
            link = f"upi://pay?pa=cashfree@double&am={order['order_amount']:.2f}&tr={cf_payment_id}"
            answer.update(action="custom", data={"payload": {"default": link, "gpay": link}})
        elif method == "upi":
            answer.update(action="custom", data={"payload": {}})
        elif method == "banktransfer":
            answer.update(action="custom", data={"payload": {"account_number": f"CF{cf_payment_id}",
                                                             "ifsc": "CFDB0000001"}})
        else:
            answer.update(action="link", data={"url": page})
        return 200, answer

    def _orders_order_id_refunds(self, params: dict, body: Any) -> tuple[int, Any]:
        order = self.orders.get(params["order_id"])
        if order is None:
            return self._error(404, "order_not_found", "order not found")
        if order["order_status"] != "PAID":
            return self._error(400, "refund_invalid", "the order has no successful payment")
        refund_id = (body or {}).get("refund_id", "")
        if (order["order_id"], refund_id) in self.refunds:
            return self._error(409, "refund_already_exists", "refund with same id is already present")
        already = sum(paise(r["refund_amount"]) for (o, _), r in self.refunds.items()
                      if o == order["order_id"] and r["refund_status"] != "CANCELLED")
        amount = paise((body or {}).get("refund_amount", 0))
        if amount <= 0 or already + amount > paise(order["order_amount"]):
            return self._error(400, "refund_amount_invalid", "refund amount exceeds the amount left")
        paid = next(p for p in (self.payments[i] for i in order["_payments"]) if p["payment_status"] == "SUCCESS")
        refund = {"cf_payment_id": paid["cf_payment_id"], "cf_refund_id": str(next(self._ids)),
                  "order_id": order["order_id"], "refund_id": refund_id, "entity": "refund",
                  "refund_amount": rupees(amount), "refund_currency": "INR", "refund_status": "PENDING",
                  "refund_type": "MERCHANT_INITIATED", "status_description": "In Progress",
                  "created_at": _now()}
        if (body or {}).get("refund_note"):
            refund["refund_note"] = body["refund_note"]
        self.refunds[(order["order_id"], refund_id)] = refund
        return 200, refund

    def _simulate(self, params: dict, body: Any) -> tuple[int, Any]:
        """The sandbox's POST /simulate: the payment `entity_id` (order pay's cf_payment_id)
        ends as `entity_simulation.payment_status`, and its webhook is sent when a webhook_url
        is set, as Cashfree's sandbox does."""
        body = body if isinstance(body, dict) else {}
        wanted = (body.get("entity_simulation") or {}).get("payment_status")
        payment = self.payments.get(str(body.get("entity_id", "")))
        if body.get("entity") != "PAYMENTS" or payment is None or wanted not in (
                "SUCCESS", "FAILED", "PENDING", "USER_DROPPED"):
            return self._error(400, "entity_id_invalid", "no such payment to simulate")
        if wanted != "PENDING":
            self.settle_payment(payment["order_id"], wanted, notify=bool(self.webhook_url))
        return 200, {"simulation_id": f"sim_{payment['cf_payment_id']}", "entity": "PAYMENTS",
                     "entity_id": payment["cf_payment_id"], "entity_simulation": {"payment_status": wanted}}

    def _orders_order_id_refunds_refund_id(self, params: dict, body: Any) -> tuple[int, Any]:
        refund = self.refunds.get((params["order_id"], params["refund_id"]))
        if refund is None:
            return self._error(404, "refund_not_found", "refund not found")
        return 200, refund


    def _orders_order_id_disputes(self, params: dict, body: Any) -> tuple[int, Any]:
        if params["order_id"] not in self.orders:
            return self._error(404, "order_not_found", "order not found")
        return 200, [self._public(d) for d in self.disputes.values()
                     if d["order_details"]["order_id"] == params["order_id"]]

    def _dispute(self, params: dict) -> dict | None:
        return self.disputes.get(params["dispute_id"])

    def _disputes_dispute_id(self, params: dict, body: Any) -> tuple[int, Any]:
        dispute = self._dispute(params)
        if dispute is None:
            return self._error(404, "dispute_not_found", "dispute not found")
        return 200, self._public(dispute)

    def _disputes_dispute_id_accept(self, params: dict, body: Any) -> tuple[int, Any]:
        dispute = self._dispute(params)
        if dispute is None:
            return self._error(404, "dispute_not_found", "dispute not found")
        stage = dispute["dispute_status"][len(dispute["dispute_type"]) + 1:]
        if stage not in ("CREATED", "INSUFFICIENT_EVIDENCE", "MERCHANT_ACCEPTED"):
            return self._error(400, "dispute_invalid", f"dispute is {dispute['dispute_status']}")
        dispute.update(dispute_status=f"{dispute['dispute_type']}_MERCHANT_ACCEPTED", updated_at=_now(),
                       resolved_at=_now())
        return 200, self._public(dispute)

    def _disputes_dispute_id_documents(self, params: dict, body: Any) -> tuple[int, Any]:
        dispute = self._dispute(params)
        if dispute is None:
            return self._error(404, "dispute_not_found", "dispute not found")
        if not isinstance(body, dict) or "file" not in body or not body.get("doc_type"):
            return self._error(400, "document_invalid", "file and doc_type are required")
        stage = dispute["dispute_status"][len(dispute["dispute_type"]) + 1:]
        if stage not in ("CREATED", "INSUFFICIENT_EVIDENCE", "DOCS_RECEIVED"):
            return self._error(400, "dispute_invalid", f"dispute is {dispute['dispute_status']}")
        filename, content = body["file"]
        dispute["dispute_evidence"].append({"document_id": next(self._ids) % 10**6, "document_name": filename,
                                            "document_type": body["doc_type"]})
        dispute.setdefault("_documents", []).append(content)
        dispute.update(dispute_status=f"{dispute['dispute_type']}_DOCS_RECEIVED", updated_at=_now())
        return 200, [self._public(dispute)]


def _form_fields(content_type: str, raw: bytes) -> dict:
    """A multipart/form-data body's fields: text as str, a file as (file name, bytes)."""
    from email.parser import BytesParser
    from email.policy import HTTP

    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_filename()
        payload = part.get_payload(decode=True)
        fields[name] = (filename, payload) if filename is not None else payload.decode()
    return fields


# -- the fixture ---------------------------------------------------------------------------------

CLIENT_ID = "TEST_CF_DOUBLE_CLIENT"
CLIENT_SECRET = "cfsk_ma_test_double_0123456789"


def _fixture():
    import pytest

    @pytest.fixture
    def cashfree_double(settings):
        """The double, started, with the gateway configured for Cashfree pointing at it. Fails
        the test if any answer or webhook of the double broke the description's schemas."""
        from payments.acquirer import _load

        description()  # read before the first call, which would otherwise wait for it
        double = CashfreeDouble(client_id=CLIENT_ID, client_secret=CLIENT_SECRET).start()
        settings.GATEWAY_ACQUIRER = "cashfree"
        settings.CASHFREE_CLIENT_ID = CLIENT_ID
        settings.CASHFREE_CLIENT_SECRET = CLIENT_SECRET
        settings.CASHFREE_WEBHOOK_SECRET = ""
        settings.CASHFREE_BASE_URL = double.base_url
        _load.cache_clear()  # an acquirer built for another test's settings is not this one's
        try:
            yield double
        finally:
            double.stop()
            _load.cache_clear()
        assert not double.violations, f"answers the description does not allow: {double.violations}"

    return cashfree_double


cashfree_double = _fixture()
