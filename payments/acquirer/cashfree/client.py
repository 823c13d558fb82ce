"""A client for Cashfree's Payment Gateway API (version 2025-01-01): orders, order pay, status
queries and refunds. acquirer.py maps these calls onto the gateway's flows (the Acquirer
protocol).

Why direct HTTP and not PyPI `cashfree-pg`: the official client is generated code that keeps
the client id, secret and environment in class attributes (`Cashfree.XClientId = ...`), one set
per process, shared by every thread; its per-call timeouts and errors are urllib3's, so the
three outcomes a payment needs told apart (declined / no answer / refused request) would be
re-derived from its exceptions anyway. The calls go over the acquirers' shared wire
(payments.acquirer.transport: urllib3's connection pool, the library under requests and the
SDK) with the guarantees below, in a module short enough to read in one sitting.

Guarantees, like webhooks/transport.py's:

- Connections are kept alive and reused: a bounded pool per process and Cashfree address
  (POOL_CONNECTIONS), so a call pays for a TLS handshake only when no idle connection is left.
- Every call is bounded by `timeout` seconds from asking the pool for a connection to the last
  byte read: a watchdog shuts the socket down, so a server that trickles bytes cannot hold a
  worker past it.
- Redirects are never followed (a 3xx is CashfreeUnavailable).
- Every create (order, order pay, refund) carries the caller's `x-idempotency-key`: the caller
  derives it from its own row so that asking again after a timeout cannot pay twice.
- Every call carries `x-api-version` and a fresh `x-request-id` (Cashfree support asks for it;
  it is in every error we raise). Calls the description secures carry x-client-id and
  x-client-secret; order pay, which the description leaves unsecured (the payment session id
  authorises it), carries neither, so the secret goes over the wire only where it is needed.
- Failures raise one of errors.py's three kinds; nothing else escapes (no socket.timeout,
  no JSONDecodeError), but LimitReached (payments.acquirer.limits, an AcquirerUnavailable):
  the account's shared outbound limit, or Cashfree's 429 past the call's time, with the
  seconds to wait. Every call waits its turn in that limit, within `timeout`.
- Card numbers and CVVs live only in the request body being sent. Nothing here logs a body or
  a header: the log line of a call is its method, path, status, duration and request id.
- Amounts cross as integer paise in both directions; money.py converts, exactly.

A base address must be https, except on a loopback host (tests and local doubles).
"""
from __future__ import annotations

import http.client
import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable
from urllib.parse import quote

from django.views.decorators.debug import sensitive_variables

from gateway.core.metrics import acquirer_call_timed, processor_ratelimit_headroom
from payments.acquirer.limits import LimitReached, call_permit, limit_lowered
from payments.acquirer.transport import (  # noqa: F401 (POOL_CONNECTIONS: the docstring's, the tests')
    POOL_CONNECTIONS,
    Throttled,
    base_address,
    exchange,
    retry_seconds,
    within_limit,
)
from payments.cards import CardInput

from .errors import (
    CashfreeAuthenticationError,
    CashfreeBadRequest,
    CashfreeBadResponse,
    CashfreeDeclined,
    CashfreeError,
    CashfreeUnavailable,
)
from .money import json_number, paise_to_rupees, rupees_to_paise

logger = logging.getLogger(__name__)

API_VERSION = "2025-01-01"
SANDBOX_BASE_URL = "https://sandbox.cashfree.com/pg"
PRODUCTION_BASE_URL = "https://api.cashfree.com/pg"
DEFAULT_TIMEOUT_SECONDS = 10.0

# The wallets Cashfree's `app` method names (PayOrderRequest > App.provider).
WALLET_PROVIDERS = frozenset(
    {"gpay", "phonepe", "ola", "paytm", "amazon", "airtel", "freecharge", "mobikwik", "jio"}
)
# ApiError502.code: "`bank_processing_failure` will be returned here to denote failure at bank."
_BANK_FAILURE_CODE = "bank_processing_failure"


@dataclass(frozen=True)
class Customer:
    """CustomerDetails: Cashfree requires an id (3-50 chars) and a 10-digit phone."""

    customer_id: str
    phone: str
    email: str = ""
    name: str = ""


@dataclass(frozen=True)
class Order:
    order_id: str
    cf_order_id: str
    status: str                 # ACTIVE, PAID, EXPIRED, TERMINATED, TERMINATION_REQUESTED
    amount: int | None          # paise
    payment_session_id: str
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class PayAnswer:
    """What order pay answered: where the customer goes next. `action` "link" with `url`
    (3-D Secure page, bank page, UPI intent link), "custom" with `payload` (UPI QR: payload
    ["qrcode"]; intent: payload app links, per Cashfree's guides: the description types payload
    as a bare object), or "post"/"form" for a bank form."""

    cf_payment_id: str
    payment_method: str
    channel: str
    action: str
    url: str
    payload: Any
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Payment:
    cf_payment_id: str
    order_id: str
    status: str                 # SUCCESS, NOT_ATTEMPTED, FAILED, USER_DROPPED, VOID, CANCELLED, PENDING
    amount: int | None          # paise
    bank_reference: str
    message: str
    payment_group: str
    error_code: str
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Refund:
    refund_id: str
    cf_refund_id: str
    order_id: str
    status: str                 # SUCCESS, PENDING, CANCELLED, ONHOLD
    amount: int | None          # paise
    arn: str
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Settlement:
    """One settlement as `POST /settlements` answers it (SettlementEntity): what Cashfree paid
    out under one UTR, with its service charge and the tax on it. Amounts in paise."""

    cf_settlement_id: str
    utr: str
    gross: int | None           # order_amount
    service_charge: int
    service_tax: int
    net: int | None             # settlement_amount
    transfer_time: str
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ReconEvent:
    """One event inside a settlement (`POST /settlement/recon`, SettlementReconEntity's data):
    a payment, refund, dispute or adjustment, with its own charge and tax. Amounts in paise."""

    event_id: str
    event_type: str             # PAYMENT, REFUND, DISPUTE, CHARGEBACK, FUND_SWEEP_REVERSAL, ...
    sale_type: str              # CREDIT or DEBIT
    amount: int
    service_charge: int
    service_tax: int
    cf_settlement_id: str
    utr: str
    order_id: str
    cf_payment_id: str
    refund_id: str
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Page:
    """One page of a cursor-paged answer; `cursor` is "" on the last page."""

    items: list
    cursor: str


# Namespace of our idempotency keys (a fixed random UUID: changing it would change every key).
_IDEMPOTENCY_NAMESPACE = uuid.UUID("6f1e2b9c-3d4a-4c8e-9a57-0b2d7e5c1f93")


def idempotency_key(*parts: str) -> str:
    """The x-idempotency-key of one create, derived from our own ids (say the payment id and
    the step): asking again after a timeout sends the same key, so Cashfree answers the first
    request's result instead of acting twice. A UUID, as the description's `format: UUID` asks."""
    if not parts or not all(isinstance(part, str) and part for part in parts):
        raise ValueError("an idempotency key is derived from one or more non-empty ids")
    return str(uuid.uuid5(_IDEMPOTENCY_NAMESPACE, "\x1f".join(parts)))


def _check_length(name: str, value: str, low: int, high: int) -> None:
    """The description's bounds, checked before sending: a clear ValueError naming the field
    rather than Cashfree's 400 after a round trip."""
    if not isinstance(value, str) or not low <= len(value) <= high:
        raise ValueError(f"Cashfree's {name} is {low} to {high} characters")


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _query_key(path: str, body: dict) -> str:
    """These reads go by POST, and every POST here carries a key: the same query, the same key."""
    return idempotency_key(path, json.dumps(body, sort_keys=True, separators=(",", ":")))


def _absent_as_empty(value: Any) -> str:
    """Cashfree's recon examples write an absent text as "null," (sic): read it as absent."""
    text = _text(value).strip()
    return "" if text.rstrip(",").lower() in ("", "null", "none", "n/a") else text


def _paise(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return rupees_to_paise(value)
    except (TypeError, ValueError) as exc:
        raise CashfreeBadResponse(f"Cashfree sent an amount we cannot read: {exc}") from None


# Cashfree's documented default allowance is about 200 order creations a minute per account
# (its rate limits page); every process together keeps to three quarters of it, and of any lower
# x-ratelimit-limit it announces (payments.acquirer.limits).
DOCUMENTED_CALLS_PER_MINUTE = 200
LIMIT_SHARE = 0.75
# Of each window of that limit, the share new orders may take (payments.acquirer.limits,
# call_permit's `share`): the rest is for the order pays, status queries and refunds that
# finish payments already started.
NEW_ORDER_SHARE = 0.5
# How long a call may wait for the next window of the account's limit before it is refused
# (LimitReached, Retry-After). Not the whole call's time: in a burst every waiting call holds a
# web worker, and the requests behind them queue until they time out (benchmarks/acquirer_burst.py:
# with the ten seconds of a whole call, 118 of 180 requests got no answer within a minute).
LIMIT_WAIT_SECONDS = 1.0


class CashfreeClient:
    """One merchant account at Cashfree. Thread-safe: it holds configuration only."""

    calls_per_minute = int(DOCUMENTED_CALLS_PER_MINUTE * LIMIT_SHARE)

    def __init__(self, *, base_url: str, client_id: str, client_secret: str,
                 api_version: str = API_VERSION, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 ssl_context=None):
        """`ssl_context`: the TLS settings of the connections (None: the system's trusted CAs;
        a benchmark's local double passes one trusting its own certificate)."""
        parts = base_address(base_url, "CASHFREE_BASE_URL")
        if not client_id or not client_secret:
            raise ValueError("a Cashfree client id and client secret are both required")
        if not timeout or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        self._address = parts
        self._prefix = parts.path.rstrip("/")
        self._client_id = client_id
        self._client_secret = client_secret
        self._api_version = api_version
        self.timeout = float(timeout)
        self._ssl_context = ssl_context

    def __repr__(self) -> str:  # the secret never reaches a log or a traceback
        return f"CashfreeClient({self._address.scheme}://{self._address.hostname}{self._prefix}, client_id={self._client_id})"

    # -- orders -------------------------------------------------------------------------------

    def create_order(self, *, order_id: str, amount: int, customer: Customer,
                     idempotency_key: str, return_url: str = "", notify_url: str = "",
                     expires_at: datetime | None = None, note: str = "") -> Order:
        """Create order `order_id` for `amount` paise (Cashfree's minimum is 100, ₹1)."""
        if amount < 100:
            raise ValueError("Cashfree takes orders of at least 100 paise (₹1)")
        _check_length("order_id", order_id, 3, 45)
        _check_length("customer_id", customer.customer_id, 3, 50)
        if not (customer.phone.isascii() and customer.phone.isdigit() and len(customer.phone) == 10):
            raise ValueError("Cashfree's customer_phone is exactly 10 digits")
        details: dict[str, Any] = {"customer_id": customer.customer_id,
                                   "customer_phone": customer.phone}
        if customer.email:
            details["customer_email"] = customer.email
        if customer.name:
            details["customer_name"] = customer.name
        body: dict[str, Any] = {
            "order_id": order_id,
            "order_amount": json_number(paise_to_rupees(amount)),
            "order_currency": "INR",
            "customer_details": details,
        }
        meta = {key: value for key, value in (("return_url", return_url),
                                              ("notify_url", notify_url)) if value}
        if meta:
            body["order_meta"] = meta
        if expires_at is not None:
            body["order_expiry_time"] = expires_at.isoformat()
        if note:
            body["order_note"] = note
        # A new order is followed by its order pay: it may take only part of a window of the
        # account's limit, so that the order pays of orders already made find room in a burst.
        return self._call("POST", "/orders", body=body, idempotency_key=idempotency_key,
                          read=self._order, limit_share=NEW_ORDER_SHARE)

    def get_order(self, order_id: str) -> Order:
        return self._call("GET", f"/orders/{quote(order_id, safe='')}", read=self._order)

    def get_payments(self, order_id: str) -> list[Payment]:
        """Every payment attempt on the order, the status query of record."""
        return self._call("GET", f"/orders/{quote(order_id, safe='')}/payments",
                          read=self._payments)

    # -- order pay ----------------------------------------------------------------------------

    def pay_upi_collect(self, *, payment_session_id: str, vpa: str, idempotency_key: str,
                        expiry_minutes: int | None = None) -> PayAnswer:
        upi: dict[str, Any] = {"channel": "collect", "upi_id": vpa}
        if expiry_minutes is not None:
            upi["upi_expiry_minutes"] = expiry_minutes
        return self._pay(payment_session_id, {"upi": upi}, idempotency_key)

    def pay_upi_intent(self, *, payment_session_id: str, idempotency_key: str) -> PayAnswer:
        return self._pay(payment_session_id, {"upi": {"channel": "link"}}, idempotency_key)

    def pay_upi_qr(self, *, payment_session_id: str, idempotency_key: str) -> PayAnswer:
        return self._pay(payment_session_id, {"upi": {"channel": "qrcode"}}, idempotency_key)

    @sensitive_variables("card", "details")
    def pay_card(self, *, payment_session_id: str, card: CardInput, idempotency_key: str,
                 holder_name: str = "") -> PayAnswer:
        """A card payment whose 3-D Secure page the customer is sent to (`action` "link",
        `url`). The number and CVV go into this one request body and nowhere else."""
        details: dict[str, Any] = {
            "channel": "link",
            "card_number": card.number,
            "card_expiry_mm": f"{card.expiry_month:02d}",
            "card_expiry_yy": f"{card.expiry_year % 100:02d}",
            "card_cvv": card.cvv,
        }
        if holder_name:
            details["card_holder_name"] = holder_name
        return self._pay(payment_session_id, {"card": details}, idempotency_key)

    def pay_netbanking(self, *, payment_session_id: str, bank_code: int,
                       idempotency_key: str) -> PayAnswer:
        """`bank_code`: Cashfree's four-digit net banking code (3021 is HDFC in its docs)."""
        if isinstance(bank_code, bool) or not isinstance(bank_code, int) or not 1000 <= bank_code <= 9999:
            raise ValueError("a Cashfree net banking code is a four-digit integer")
        method = {"netbanking": {"channel": "link", "netbanking_bank_code": bank_code}}
        return self._pay(payment_session_id, method, idempotency_key)

    def pay_wallet(self, *, payment_session_id: str, provider: str, phone: str,
                   idempotency_key: str) -> PayAnswer:
        if provider not in WALLET_PROVIDERS:
            raise ValueError(f"Cashfree has no wallet {provider!r}")
        method = {"app": {"channel": "link", "provider": provider, "phone": phone}}
        return self._pay(payment_session_id, method, idempotency_key)

    def pay_bank_transfer(self, *, payment_session_id: str, idempotency_key: str) -> PayAnswer:
        """NEFT / RTGS: Cashfree answers with the account the customer transfers to (`payload`);
        the payment succeeds when the money arrives (webhook or status query)."""
        method = {"banktransfer": {"channel": "link"}}
        return self._pay(payment_session_id, method, idempotency_key)

    # -- refunds ------------------------------------------------------------------------------

    def create_refund(self, *, order_id: str, refund_id: str, amount: int,
                      idempotency_key: str, note: str = "") -> Refund:
        """Refund `amount` paise of the order's payment. `refund_id` is ours (3-40 chars)."""
        if amount <= 0:
            raise ValueError("a refund amount must be positive")
        _check_length("refund_id", refund_id, 3, 40)
        body: dict[str, Any] = {"refund_amount": json_number(paise_to_rupees(amount)),
                                "refund_id": refund_id}
        if note:
            body["refund_note"] = note
        return self._call("POST", f"/orders/{quote(order_id, safe='')}/refunds", body=body,
                          idempotency_key=idempotency_key, money_call=True, read=self._refund)

    def get_refund(self, order_id: str, refund_id: str) -> Refund:
        path = f"/orders/{quote(order_id, safe='')}/refunds/{quote(refund_id, safe='')}"
        return self._call("GET", path, read=self._refund)

    # -- the sandbox's simulation (manage.py acquirer_smoke) ----------------------------------

    def simulate_payment(self, *, cf_payment_id: str, status: str, idempotency_key: str) -> dict:
        """Sandbox only: Cashfree's `POST /simulate` ends payment `cf_payment_id` (order pay's
        id, the description's "transactionId") as `status` (SUCCESS, FAILED, PENDING,
        USER_DROPPED), as a bank would, with its webhook. Answers the SimulationResponse."""
        body = {"entity": "PAYMENTS", "entity_id": cf_payment_id, "entity_simulation": {"payment_status": status}}
        return self._call("POST", "/simulate", body=body, idempotency_key=idempotency_key,
                          read=lambda answer: answer if isinstance(answer, dict) else {})

    # -- disputes ------------------------------------------------------------------------------
    # The entities are read by disputes.py (the one reading, shared with the dispute webhooks);
    # here only their shape is checked.

    def get_order_disputes(self, order_id: str) -> list[dict]:
        """Every dispute against the order (`GET /orders/{order_id}/disputes`)."""
        return self._call("GET", f"/orders/{quote(order_id, safe='')}/disputes", read=_dispute_list)

    def get_dispute(self, dispute_id: str) -> dict:
        return self._call("GET", f"/disputes/{_dispute_id(dispute_id)}", read=_dispute_entity)

    def accept_dispute(self, dispute_id: str) -> dict:
        """`PUT /disputes/{dispute_id}/accept`: the merchant will not contest it."""
        return self._call("PUT", f"/disputes/{_dispute_id(dispute_id)}/accept", read=_dispute_entity)

    def upload_dispute_document(self, dispute_id: str, *, doc_type: str, filename: str, content_type: str,
                                content: bytes, idempotency_key: str, note: str = "") -> dict:
        """`POST /disputes/{dispute_id}/documents` (multipart: file, doc_type, note): the dispute
        as Cashfree then states it (it answers a list of one)."""
        fields = {"doc_type": doc_type, **({"note": note} if note else {})}
        form = multipart_form(fields, file=("file", filename, content_type, content))
        return self._call("POST", f"/disputes/{_dispute_id(dispute_id)}/documents", form=form,
                          idempotency_key=idempotency_key, read=_dispute_after_upload)

    # -- settlements ---------------------------------------------------------------------------

    def fetch_settlements(self, *, cursor: str = "", limit: int = 100, start: datetime | None = None,
                          end: datetime | None = None, settlement_ids: list[str] | None = None) -> Page:
        """One page of the account's settlements (`POST /settlements`), by period or by id."""
        body = self._settlement_query(cursor, limit, start, end, settlement_ids)
        return self._call("POST", "/settlements", body=body, read=self._settlements_page,
                          idempotency_key=_query_key("/settlements", body))

    def fetch_settlement_recon(self, *, settlement_ids: list[str], cursor: str = "",
                               limit: int = 100) -> Page:
        """One page of the events inside the named settlements (`POST /settlement/recon`)."""
        if not settlement_ids:
            raise ValueError("name at least one settlement to reconcile")
        body = self._settlement_query(cursor, limit, None, None, settlement_ids)
        return self._call("POST", "/settlement/recon", body=body, read=self._recon_page,
                          idempotency_key=_query_key("/settlement/recon", body))

    @staticmethod
    def _settlement_query(cursor: str, limit: int, start: datetime | None, end: datetime | None,
                          settlement_ids: list[str] | None) -> dict:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise ValueError("Cashfree pages 1 to 1000 settlements at a time")
        pagination: dict[str, Any] = {"limit": limit}
        if cursor:
            pagination["cursor"] = cursor
        filters: dict[str, Any] = {}
        if settlement_ids:
            filters["cf_settlement_ids"] = [str(item) for item in settlement_ids]
        if start is not None:
            filters["start_date"] = start.isoformat()
        if end is not None:
            filters["end_date"] = end.isoformat()
        return {"pagination": pagination, "filters": filters}

    @classmethod
    def _settlements_page(cls, answer: Any) -> Page:
        """The description types this answer as one SettlementEntity, while Cashfree's guides
        page it like the recon answer ({cursor, limit, data}); both are read: a lone entity is
        a page of one with no cursor after it."""
        if not isinstance(answer, dict):
            raise CashfreeBadResponse("Cashfree's settlements were not an object")
        if isinstance(answer.get("data"), list):
            return Page([cls._settlement(item) for item in answer["data"]], _text(answer.get("cursor")))
        return Page([cls._settlement(answer)], "")

    @staticmethod
    def _settlement(item: Any) -> Settlement:
        if not isinstance(item, dict) or not item.get("cf_settlement_id"):
            raise CashfreeBadResponse("a settlement of Cashfree's had no cf_settlement_id")
        return Settlement(
            cf_settlement_id=_text(item.get("cf_settlement_id")),
            utr=_text(item.get("transfer_utr") or item.get("settlement_utr")),
            gross=_paise(item.get("order_amount")),
            service_charge=_paise(item.get("service_charge")) or 0,
            service_tax=_paise(item.get("service_tax")) or 0,
            net=_paise(item.get("settlement_amount")),
            transfer_time=_text(item.get("transfer_time")),
            raw=item,
        )

    @classmethod
    def _recon_page(cls, answer: Any) -> Page:
        if not isinstance(answer, dict) or not isinstance(answer.get("data", []), list):
            raise CashfreeBadResponse("Cashfree's settlement recon was not a page of events")
        return Page([cls._recon_event(item) for item in answer.get("data") or []],
                    _text(answer.get("cursor")))

    @staticmethod
    def _recon_event(item: Any) -> ReconEvent:
        if not isinstance(item, dict):
            raise CashfreeBadResponse("an event of Cashfree's settlement recon was not an object")
        parts = {name: item.get(name) if isinstance(item.get(name), dict) else {}
                 for name in ("event_details", "order_details", "payment_details",
                              "refund_details", "settlement_details")}
        event = parts["event_details"]
        if not event.get("event_id") or event.get("event_amount") is None:
            raise CashfreeBadResponse("an event of Cashfree's settlement recon had no id or amount")
        return ReconEvent(
            event_id=_text(event.get("event_id")),
            event_type=_text(event.get("event_type")).upper(),
            sale_type=_text(event.get("sale_type")).upper(),
            amount=_paise(event.get("event_amount")),
            service_charge=_paise(event.get("event_service_charge")) or 0,
            service_tax=_paise(event.get("event_service_tax")) or 0,
            cf_settlement_id=_text(parts["settlement_details"].get("cf_settlement_id")),
            utr=_text(parts["settlement_details"].get("utr")),
            order_id=_text(parts["order_details"].get("order_id")),
            cf_payment_id=_text(parts["payment_details"].get("cf_payment_id")),
            refund_id=_absent_as_empty(parts["refund_details"].get("refund_id")),
            raw=item,
        )

    # -- reading answers ----------------------------------------------------------------------

    @sensitive_variables("method", "body")
    def _pay(self, payment_session_id: str, method: dict, idempotency_key: str) -> PayAnswer:
        body = {"payment_session_id": payment_session_id, "payment_method": method}
        return self._call("POST", "/orders/sessions", body=body, idempotency_key=idempotency_key,
                          authenticated=False, money_call=True, read=self._pay_answer)

    @staticmethod
    def _pay_answer(answer: Any) -> PayAnswer:
        if not isinstance(answer, dict):
            raise CashfreeBadResponse("Cashfree's order pay answer was not an object")
        data = answer.get("data") if isinstance(answer.get("data"), dict) else {}
        return PayAnswer(
            cf_payment_id=_text(answer.get("cf_payment_id")),
            payment_method=_text(answer.get("payment_method")),
            channel=_text(answer.get("channel")),
            action=_text(answer.get("action")),
            url=_text(data.get("url")),
            payload=data.get("payload"),
            raw=answer,
        )

    @staticmethod
    def _order(answer: Any) -> Order:
        if not isinstance(answer, dict):
            raise CashfreeBadResponse("Cashfree's order was not an object")
        return Order(
            order_id=_text(answer.get("order_id")),
            cf_order_id=_text(answer.get("cf_order_id")),
            status=_text(answer.get("order_status")),
            amount=_paise(answer.get("order_amount")),
            payment_session_id=_text(answer.get("payment_session_id")),
            raw=answer,
        )

    @classmethod
    def _payments(cls, answer: Any) -> list[Payment]:
        if not isinstance(answer, list):
            raise CashfreeBadResponse("Cashfree's payments of an order were not a list")
        return [cls._payment(item) for item in answer]

    @staticmethod
    def _payment(item: Any) -> Payment:
        if not isinstance(item, dict):
            raise CashfreeBadResponse("a payment of Cashfree's list was not an object")
        error = item.get("error_details") if isinstance(item.get("error_details"), dict) else {}
        return Payment(
            cf_payment_id=_text(item.get("cf_payment_id")),
            order_id=_text(item.get("order_id")),
            status=_text(item.get("payment_status")),
            amount=_paise(item.get("payment_amount")),
            bank_reference=_text(item.get("bank_reference")),
            message=_text(item.get("payment_message")),
            payment_group=_text(item.get("payment_group")),
            error_code=_text(error.get("error_code")),
            raw=item,
        )

    @staticmethod
    def _refund(answer: Any) -> Refund:
        if not isinstance(answer, dict):
            raise CashfreeBadResponse("Cashfree's refund was not an object")
        return Refund(
            refund_id=_text(answer.get("refund_id")),
            cf_refund_id=_text(answer.get("cf_refund_id")),
            order_id=_text(answer.get("order_id")),
            status=_text(answer.get("refund_status")),
            amount=_paise(answer.get("refund_amount")),
            arn=_text(answer.get("refund_arn")),
            raw=answer,
        )

    # -- the wire -----------------------------------------------------------------------------

    def _headers(self, *, request_id: str, idempotency_key: str | None,
                 authenticated: bool) -> dict[str, str]:
        headers = {
            "Accept": "application/json",
            "x-api-version": self._api_version,
            "x-request-id": request_id,
        }
        if authenticated:
            headers["x-client-id"] = self._client_id
            headers["x-client-secret"] = self._client_secret
        if idempotency_key is not None:
            headers["x-idempotency-key"] = idempotency_key
        return headers

    @sensitive_variables("kwargs")
    def _call(self, method: str, path: str, *, limit_share: float = 1.0, **kwargs) -> Any:
        """One call within the account's shared outbound limit (payments.acquirer.limits), the
        whole of it, waits included, within `timeout`: a 429 is asked again once after its
        x-ratelimit-retry when that fits; otherwise LimitReached (no answer, Retry-After)."""
        budget = time.monotonic() + self.timeout

        def permit() -> None:
            # Waiting for the limit's next window holds the caller (a web worker, in S2S) for
            # at most LIMIT_WAIT_SECONDS of its time: past that it is refused with Retry-After.
            try:
                left = call_permit(self._client_id, calls_per_minute=self.calls_per_minute, share=limit_share,
                                   deadline=min(budget, time.monotonic() + LIMIT_WAIT_SECONDS))
            except LimitReached:
                processor_ratelimit_headroom.labels("cashfree", "limiter").set(0)
                raise
            if left is not None:
                processor_ratelimit_headroom.labels("cashfree", "limiter").set(left)

        return within_limit("Cashfree", method, path, budget=budget, permit=permit,
                            once=lambda: self._call_once(method, path, **kwargs))

    def _adjust(self, headers: dict[str, str]) -> None:
        # Cashfree's x-ratelimit-limit is the account's allowance per minute (its docs): keep
        # every process below it, as below the documented one. With x-ratelimit-remaining, what
        # is left of it is the headroom gauge's "processor" source.
        try:
            announced = int(headers.get("x-ratelimit-limit", ""))
        except ValueError:
            return
        try:
            remaining = int(headers.get("x-ratelimit-remaining", ""))
        except ValueError:
            remaining = None
        if announced > 0 and remaining is not None:
            processor_ratelimit_headroom.labels("cashfree", "processor").set(min(1.0, max(0.0, remaining / announced)))
        if 0 < announced and announced * LIMIT_SHARE < self.calls_per_minute:
            limit_lowered(self._client_id, max(1, int(announced * LIMIT_SHARE)))

    @sensitive_variables("body", "payload", "headers")
    def _call_once(self, method: str, path: str, *, body: dict | None = None,
                   form: tuple[bytes, str] | None = None,
                   idempotency_key: str | None = None, authenticated: bool = True,
                   money_call: bool = False, read: Callable[[Any], Any] | None = None) -> Any:
        if method == "POST" and not idempotency_key:
            raise ValueError("every create carries an idempotency key")
        if idempotency_key is not None:
            try:
                uuid.UUID(idempotency_key)
            except (TypeError, ValueError):
                raise ValueError("an idempotency key is a UUID (see idempotency_key())") from None
        request_id = str(uuid.uuid4())
        headers = self._headers(request_id=request_id, idempotency_key=idempotency_key,
                                authenticated=authenticated)
        payload = None
        if body is not None:
            payload = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        elif form is not None:  # multipart/form-data, built by multipart_form
            payload, headers["Content-Type"] = form
        started = time.monotonic()
        try:
            with acquirer_call_timed("cashfree") as outcome:
                status, response_headers, data = self._exchange(method, self._prefix + path, headers, payload)
                outcome.append("ok" if 200 <= status < 300 else "error_5xx" if status >= 500
                               else "rate_limited" if status == 429 else "rejected")
        except CashfreeError as exc:
            exc.request_id = exc.request_id or request_id
            raise
        except (OSError, http.client.HTTPException) as exc:
            logger.warning("cashfree %s %s: no answer after %d ms (%s; request id %s)", method,
                           path, (time.monotonic() - started) * 1000, type(exc).__name__, request_id)
            raise CashfreeUnavailable(f"Cashfree did not answer: {type(exc).__name__}",
                                      request_id=request_id) from None
        finally:
            payload = None  # drop our reference to a body that may hold a card number
        request_id = response_headers.get("x-request-id") or request_id
        self._adjust(response_headers)
        if status == 429:
            logger.warning("cashfree %s %s -> 429 (request id %s)", method, path, request_id)
            raise Throttled(retry_seconds(response_headers.get("x-ratelimit-retry")), request_id)
        logger.info("cashfree %s %s -> %s in %d ms (request id %s)", method, path, status,
                    (time.monotonic() - started) * 1000, request_id)
        try:
            answer = json.loads(data, parse_float=Decimal) if data else None
        except ValueError:
            answer = None
            if 200 <= status < 300:
                raise CashfreeBadResponse("Cashfree's answer was not JSON", status=status,
                                          request_id=request_id) from None
        if 200 <= status < 300:
            if read is None:
                return answer
            try:
                return read(answer)
            except CashfreeError as exc:  # an answer we cannot read: say which call it was
                exc.status, exc.request_id = status, request_id
                raise
        raise self._error(status, answer, request_id, money_call=money_call)

    @staticmethod
    def _error(status: int, answer: Any, request_id: str, *, money_call: bool) -> CashfreeError:
        details = answer if isinstance(answer, dict) else {}
        code, kind = _text(details.get("code")), _text(details.get("type"))
        message = _text(details.get("message")) or f"Cashfree answered HTTP {status}"
        args = dict(status=status, code=code, type=kind, request_id=request_id)
        if status in (401, 403):
            return CashfreeAuthenticationError(message, **args)
        if status == 502 and money_call and code == _BANK_FAILURE_CODE:
            return CashfreeDeclined(message, **args)
        if status == 429 or status >= 500 or status < 400:
            return CashfreeUnavailable(message, **args)
        return CashfreeBadRequest(message, **args)

    def _exchange(self, method: str, path: str, headers: dict[str, str],
                  payload: bytes | None) -> tuple[int, dict[str, str], bytes]:
        """One request on a kept-alive connection of the process's pool (payments.acquirer.transport),
        bounded end to end by self.timeout."""
        return exchange(self._address, method, path, headers, payload, timeout=self.timeout,
                        ssl_context=self._ssl_context,
                        too_large=lambda status: CashfreeBadResponse("Cashfree's answer was larger than we read",
                                                                     status=status))


def payment_entity(item: Any) -> Payment:
    """Cashfree's payment entity (a status query's list item, a payment webhook's
    `data.payment`) read as the status query reads it. CashfreeBadResponse if not an object."""
    return CashfreeClient._payment(item)


def refund_entity(item: Any) -> Refund:
    """Cashfree's refund entity (a refund call's answer, a refund webhook's `data.refund`)."""
    return CashfreeClient._refund(item)


# -- disputes: shapes only (disputes.py reads them) ------------------------------------------------

def _dispute_id(dispute_id: str) -> str:
    # The description types dispute_id as an integer: anything else never leaves here.
    text = str(dispute_id)
    if not (text.isascii() and text.isdigit()) or len(text) > 19:
        raise ValueError("a Cashfree dispute id is a number")
    return text


def _dispute_entity(answer: Any) -> dict:
    if not isinstance(answer, dict) or answer.get("dispute_id") in (None, ""):
        raise CashfreeBadResponse("Cashfree's dispute was not an object with a dispute_id")
    return answer


def _dispute_list(answer: Any) -> list[dict]:
    if not isinstance(answer, list):
        raise CashfreeBadResponse("Cashfree's disputes of an order were not a list")
    return [_dispute_entity(item) for item in answer]


def _dispute_after_upload(answer: Any) -> dict:
    # The description answers the upload with a list of DisputesEntity: the dispute, once.
    found = _dispute_list(answer) if isinstance(answer, list) else [_dispute_entity(answer)]
    if not found:
        raise CashfreeBadResponse("Cashfree answered a document upload with no dispute")
    return found[0]


def multipart_form(fields: dict[str, str], *, file: tuple[str, str, str, bytes]) -> tuple[bytes, str]:
    """A multipart/form-data body of text `fields` and one `file` (field name, file name, content
    type, bytes), and its Content-Type header. The boundary is random and checked absent from
    the content; the file name is reduced to safe characters (no quote or line break)."""
    name, filename, content_type, content = file
    safe_name = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in filename)[:100] or "file"
    while True:
        boundary = "----gateway" + uuid.uuid4().hex
        if boundary.encode() not in content and all(boundary not in value for value in fields.values()):
            break
    parts = []
    for key, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'.encode()
                     + value.encode() + b"\r\n")
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe_name}"\r\n'
                 f"Content-Type: {content_type}\r\n\r\n".encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def settlement_entity(item: Any) -> Settlement:
    """Cashfree's settlement entity (a settlements call's item, a settlement webhook's
    `data.settlement`). CashfreeBadResponse without a cf_settlement_id or with a bad amount."""
    return CashfreeClient._settlement(item)
