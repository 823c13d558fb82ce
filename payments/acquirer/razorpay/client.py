"""A client for Razorpay's Payments API (v1): orders, S2S payments (UPI, cards, net banking,
wallets), the status query, capture and refunds. acquirer.py maps these calls onto the gateway's
flows (the Acquirer protocol).

Why direct HTTP and not PyPI `razorpay`: the official client is built on `requests` with no
timeout unless every caller passes one, raises its own errors for some answers and returns the
body for others, and would be a new dependency for a dozen calls. The calls go over the
acquirers' shared wire (payments.acquirer.transport, as Cashfree's do) with the guarantees below.

Guarantees, like webhooks/transport.py's:

- Connections are kept alive and reused: a bounded pool per process and Razorpay address.
- Every call is bounded by `timeout` seconds from asking the pool for a connection to the last
  byte read: a watchdog shuts the socket down, so a server that trickles bytes cannot hold a
  worker past it.
- Redirects are never followed (a 3xx is RazorpayUnavailable).
- Authenticated with HTTP Basic (key id, key secret), Razorpay's only scheme. The secret is in
  that one header of the request and nowhere else: not in a log line, a repr or an exception.
- Every call waits its turn in the account's shared outbound limit
  (payments.acquirer.limits.call_permit, keyed by the key id), within `timeout`. Razorpay's
  429 (its docs ask for a backoff and announce no allowance) is asked again once after its
  Retry-After (1 s when absent) when that fits in the call's time; otherwise LimitReached
  (an AcquirerUnavailable with the seconds to wait).
- Failures raise one of errors.py's kinds (or LimitReached); nothing else escapes (no
  socket.timeout, no JSONDecodeError).
- Razorpay's creates carry no idempotency key (its API has none for orders and payments), so
  the adapter reads before it creates: an order is found by its receipt (our txn id), a refund
  by its receipt among the payment's refunds.
- Card numbers and CVVs live only in the one request body being sent (create_payment_json).
- Amounts cross as integer paise in both directions (money.py refuses anything else).

A base address must be https, except on a loopback host (tests and local doubles).
"""
from __future__ import annotations

import base64
import http.client
import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import quote, urlencode

from django.views.decorators.debug import sensitive_variables

from gateway.core.metrics import acquirer_call_timed
from payments.acquirer.limits import call_permit
from payments.acquirer.transport import Throttled, base_address, exchange, retry_seconds, within_limit
from payments.cards import CardInput

from .errors import (
    RazorpayAuthenticationError,
    RazorpayBadRequest,
    RazorpayBadResponse,
    RazorpayError,
    RazorpayUnavailable,
)
from .money import paise_in, paise_out

logger = logging.getLogger(__name__)

BASE_URL = "https://api.razorpay.com/v1"  # test and live alike: the key (rzp_test_ / rzp_live_) decides
DEFAULT_TIMEOUT_SECONDS = 10.0
# Razorpay publishes no per-account allowance (its "Pagination & Rate Limiting" page asks for a
# backoff on 429). We keep every process together under this many calls a minute per key, a guess
# to confirm with Razorpay (docs/going-live.md, "Razorpay: what is still a guess").
CALLS_PER_MINUTE = 600


@dataclass(frozen=True)
class Order:
    id: str
    receipt: str
    status: str             # created, attempted, paid
    amount: int
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Payment:
    id: str
    order_id: str
    status: str             # created, authorized, captured, refunded, failed
    amount: int
    method: str
    vpa: str
    rrn: str                # the bank's reference: acquirer_data.rrn, else bank_transaction_id
    error_code: str
    error_description: str
    notes: dict
    created_at: int
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Refund:
    id: str
    payment_id: str
    status: str             # pending, processed, failed
    amount: int
    receipt: str
    arn: str
    notes: dict
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Settlement:
    """A payout (GET /settlements): `amount` is what reached the merchant's bank, after `fees`
    and `tax`, all in paise."""

    id: str
    amount: int
    fees: int
    tax: int
    utr: str
    status: str                 # created, processed, failed
    created_at: int
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ReconItem:
    """One line of a day's settlement recon (GET /settlements/recon/combined): a payment,
    refund, adjustment or dispute, with its fee and tax, and the settlement that carried it."""

    entity_id: str
    type: str
    amount: int
    fee: int
    tax: int
    settlement_id: str
    order_receipt: str
    payment_id: str
    notes: dict
    raw: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Created:
    """What an S2S create answered: the payment's id and where the customer goes next (`url`,
    the first `next` redirect: the issuer's 3-D Secure page, the bank's or wallet's page) or the
    upi:// `link` of the intent flow."""

    payment_id: str
    url: str
    link: str
    raw: dict = field(default_factory=dict, repr=False)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _notes(value: Any) -> dict:
    return value if isinstance(value, dict) else {}  # Razorpay writes an empty one as []


def _amount(value: Any) -> int:
    try:
        return paise_in(value)
    except (TypeError, ValueError) as exc:
        raise RazorpayBadResponse(f"Razorpay sent an amount we cannot read: {exc}") from None


def order_entity(item: Any) -> Order:
    if not isinstance(item, dict) or not item.get("id"):
        raise RazorpayBadResponse("Razorpay's order was not an order")
    return Order(id=_text(item["id"]), receipt=_text(item.get("receipt")), status=_text(item.get("status")),
                 amount=_amount(item.get("amount")), raw=item)


def payment_entity(item: Any) -> Payment:
    """Razorpay's payment entity (the status query's, a webhook's payload.payment.entity)."""
    if not isinstance(item, dict) or not item.get("id"):
        raise RazorpayBadResponse("Razorpay's payment was not a payment")
    bank = item.get("acquirer_data") if isinstance(item.get("acquirer_data"), dict) else {}
    created = item.get("created_at")
    return Payment(
        id=_text(item["id"]), order_id=_text(item.get("order_id")), status=_text(item.get("status")),
        amount=_amount(item.get("amount")), method=_text(item.get("method")),
        vpa=_text(item.get("vpa")).lower(),
        rrn=_text(bank.get("rrn") or bank.get("bank_transaction_id") or bank.get("upi_transaction_id")),
        error_code=_text(item.get("error_code")), error_description=_text(item.get("error_description")),
        notes=_notes(item.get("notes")), created_at=created if isinstance(created, int) else 0, raw=item)


def refund_entity(item: Any) -> Refund:
    """Razorpay's refund entity (a refund call's answer, a webhook's payload.refund.entity)."""
    if not isinstance(item, dict) or not item.get("id"):
        raise RazorpayBadResponse("Razorpay's refund was not a refund")
    bank = item.get("acquirer_data") if isinstance(item.get("acquirer_data"), dict) else {}
    return Refund(id=_text(item["id"]), payment_id=_text(item.get("payment_id")), status=_text(item.get("status")),
                  amount=_amount(item.get("amount")), receipt=_text(item.get("receipt")),
                  arn=_text(bank.get("arn")), notes=_notes(item.get("notes")), raw=item)


def settlement_entity(item: Any) -> Settlement:
    if not isinstance(item, dict) or not item.get("id"):
        raise RazorpayBadResponse("Razorpay's settlement was not a settlement")
    created = item.get("created_at")
    return Settlement(id=_text(item["id"]), amount=_amount(item.get("amount")), fees=_amount(item.get("fees") or 0),
                      tax=_amount(item.get("tax") or 0), utr=_text(item.get("utr")), status=_text(item.get("status")),
                      created_at=created if isinstance(created, int) else 0, raw=item)


def recon_item(item: Any) -> ReconItem:
    if not isinstance(item, dict) or not item.get("entity_id"):
        raise RazorpayBadResponse("a line of Razorpay's settlement recon had no entity_id")
    return ReconItem(entity_id=_text(item["entity_id"]), type=_text(item.get("type")), amount=_amount(item.get("amount")),
                     fee=_amount(item.get("fee") or 0), tax=_amount(item.get("tax") or 0),
                     settlement_id=_text(item.get("settlement_id")), order_receipt=_text(item.get("order_receipt")),
                     payment_id=_text(item.get("payment_id")), notes=_notes(item.get("notes")), raw=item)


def _items(answer: Any, read: Callable[[Any], Any]) -> list:
    if not isinstance(answer, dict) or not isinstance(answer.get("items"), list):
        raise RazorpayBadResponse("Razorpay's collection had no items")
    return [read(item) for item in answer["items"]]


def _created(answer: Any) -> Created:
    if not isinstance(answer, dict) or not answer.get("razorpay_payment_id"):
        raise RazorpayBadResponse("Razorpay's payment create answer carried no razorpay_payment_id")
    steps = answer.get("next") if isinstance(answer.get("next"), list) else []
    url = next((_text(step.get("url")) for step in steps
                if isinstance(step, dict) and step.get("action") == "redirect" and step.get("url")), "")
    link = _text(answer.get("link"))
    return Created(payment_id=_text(answer["razorpay_payment_id"]), url=url,
                   link=link if link.lower().startswith("upi://") else "", raw=answer)


class RazorpayClient:
    """One merchant account at Razorpay. Thread-safe: it holds configuration only."""

    calls_per_minute = CALLS_PER_MINUTE

    def __init__(self, *, base_url: str, key_id: str, key_secret: str, timeout: float = DEFAULT_TIMEOUT_SECONDS):
        parts = base_address(base_url, "RAZORPAY_BASE_URL")
        if not key_id or not key_secret:
            raise ValueError("a Razorpay key id and key secret are both required")
        if not timeout or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        self._address = parts
        self._prefix = parts.path.rstrip("/")
        self._key_id = key_id
        self._authorization = "Basic " + base64.b64encode(f"{key_id}:{key_secret}".encode()).decode()
        self.timeout = float(timeout)

    def __repr__(self) -> str:  # the secret never reaches a log or a traceback
        return f"RazorpayClient({self._address.scheme}://{self._address.hostname}{self._prefix}, key_id={self._key_id})"

    # -- orders -------------------------------------------------------------------------------

    def create_order(self, *, amount: int, receipt: str, notes: dict[str, str]) -> Order:
        """Create an order of `amount` paise (Razorpay's minimum is 100, ₹1) with `receipt` (our
        txn id; at most 40 characters)."""
        if paise_out(amount) < 100:
            raise ValueError("Razorpay takes orders of at least 100 paise (₹1)")
        if not 1 <= len(receipt) <= 40:
            raise ValueError("Razorpay's receipt is 1 to 40 characters")
        return self._call("POST", "/orders", body={"amount": amount, "currency": "INR", "receipt": receipt,
                                                   "notes": notes}, read=order_entity)

    def orders_by_receipt(self, receipt: str) -> list[Order]:
        return self._call("GET", "/orders?" + urlencode({"receipt": receipt}),
                          read=lambda answer: _items(answer, order_entity))

    def order_payments(self, order_id: str) -> list[Payment]:
        """Every payment on the order: the status query of record."""
        return self._call("GET", f"/orders/{quote(order_id, safe='')}/payments",
                          read=lambda answer: _items(answer, payment_entity))

    # -- payments -----------------------------------------------------------------------------

    def get_payment(self, payment_id: str) -> Payment:
        return self._call("GET", f"/payments/{quote(payment_id, safe='')}", read=payment_entity)

    def capture(self, *, payment_id: str, amount: int) -> Payment:
        return self._call("POST", f"/payments/{quote(payment_id, safe='')}/capture",
                          body={"amount": paise_out(amount), "currency": "INR"}, read=payment_entity)

    def create_payment_upi(self, *, body: dict) -> Created:
        """S2S UPI (POST /payments/create/upi): `upi.flow` "intent" answers a upi:// link,
        "collect" sends a request to `upi.vpa`."""
        return self._call("POST", "/payments/create/upi", body=body, read=_created)

    @sensitive_variables("body", "card")
    def create_payment_json(self, *, body: dict, card: CardInput | None = None) -> Created:
        """S2S JSON (POST /payments/create/json): card, net banking or wallet; answers the page
        the customer is sent to. A card's number and CVV go into this one body."""
        if card is not None:
            body = {**body, "card": {"number": card.number, "expiry_month": f"{card.expiry_month:02d}",
                                     "expiry_year": f"{card.expiry_year % 100:02d}", "cvv": card.cvv}}
        return self._call("POST", "/payments/create/json", body=body, read=_created)

    # -- refunds ------------------------------------------------------------------------------

    def create_refund(self, *, payment_id: str, amount: int, receipt: str, notes: dict[str, str]) -> Refund:
        if not 1 <= len(receipt) <= 40:
            raise ValueError("Razorpay's refund receipt is 1 to 40 characters")
        return self._call("POST", f"/payments/{quote(payment_id, safe='')}/refund",
                          body={"amount": paise_out(amount), "speed": "normal", "receipt": receipt, "notes": notes},
                          read=refund_entity)

    def payment_refunds(self, payment_id: str) -> list[Refund]:
        return self._call("GET", f"/payments/{quote(payment_id, safe='')}/refunds?count=100",
                          read=lambda answer: _items(answer, refund_entity))

    # -- settlements --------------------------------------------------------------------------

    def settlements(self, *, start: int | None, end: int | None, skip: int, count: int = 100) -> list[Settlement]:
        """One page of payouts created between `start` and `end` (Unix seconds), newest first."""
        query = {"count": count, "skip": skip, **({"from": start} if start else {}), **({"to": end} if end else {})}
        return self._call("GET", "/settlements?" + urlencode(query), read=lambda answer: _items(answer, settlement_entity))

    def get_settlement(self, settlement_id: str) -> Settlement:
        return self._call("GET", f"/settlements/{quote(settlement_id, safe='')}", read=settlement_entity)

    def recon(self, *, year: int, month: int, day: int, skip: int, count: int = 100) -> list[ReconItem]:
        """One page of the day's settlement recon: every line settled that day."""
        query = {"year": year, "month": month, "day": day, "count": count, "skip": skip}
        return self._call("GET", "/settlements/recon/combined?" + urlencode(query),
                          read=lambda answer: _items(answer, recon_item))

    # -- the wire -----------------------------------------------------------------------------

    @sensitive_variables("kwargs")
    def _call(self, method: str, path: str, **kwargs) -> Any:
        """One call within the account's shared outbound limit, the whole of it, waits included,
        within `timeout`: a 429 is asked again once after its Retry-After when that fits;
        otherwise LimitReached."""
        budget = time.monotonic() + self.timeout
        return within_limit(
            "Razorpay", method, path, budget=budget,
            permit=lambda: call_permit(self._key_id, calls_per_minute=self.calls_per_minute, deadline=budget),
            once=lambda: self._call_once(method, path, **kwargs))

    @sensitive_variables("body", "payload", "headers")
    def _call_once(self, method: str, path: str, *, body: dict | None = None,
                   read: Callable[[Any], Any] | None = None) -> Any:
        request_id = str(uuid.uuid4())
        headers = {"Accept": "application/json", "Authorization": self._authorization, "X-Request-Id": request_id}
        payload = None
        if body is not None:
            payload = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        started = time.monotonic()
        where = path.split("?")[0]
        try:
            with acquirer_call_timed("razorpay") as outcome:
                status, response_headers, data = self._exchange(method, self._prefix + path, headers, payload)
                outcome.append("ok" if 200 <= status < 300 else "error_5xx" if status >= 500
                               else "rate_limited" if status == 429 else "rejected")
        except RazorpayError as exc:
            exc.request_id = exc.request_id or request_id
            raise
        except (OSError, http.client.HTTPException) as exc:
            logger.warning("razorpay %s %s: no answer after %d ms (%s; request id %s)", method, where,
                           (time.monotonic() - started) * 1000, type(exc).__name__, request_id)
            raise RazorpayUnavailable(f"Razorpay did not answer: {type(exc).__name__}", request_id=request_id) from None
        finally:
            payload = None  # drop our reference to a body that may hold a card number
        request_id = response_headers.get("x-razorpay-request-id") or request_id
        if status == 429:
            logger.warning("razorpay %s %s -> 429 (request id %s)", method, where, request_id)
            raise Throttled(retry_seconds(response_headers.get("retry-after")), request_id)
        logger.info("razorpay %s %s -> %s in %d ms (request id %s)", method, where, status,
                    (time.monotonic() - started) * 1000, request_id)
        try:
            answer = json.loads(data) if data else None
        except ValueError:
            answer = None
            if 200 <= status < 300:
                raise RazorpayBadResponse("Razorpay's answer was not JSON", status=status,
                                          request_id=request_id) from None
        if 200 <= status < 300:
            if read is None:
                return answer
            try:
                return read(answer)
            except RazorpayError as exc:
                exc.status, exc.request_id = status, request_id
                raise
        raise self._error(status, answer, request_id)

    @staticmethod
    def _error(status: int, answer: Any, request_id: str) -> RazorpayError:
        error = answer.get("error") if isinstance(answer, dict) and isinstance(answer.get("error"), dict) else {}
        message = _text(error.get("description")) or f"Razorpay answered HTTP {status}"
        args = dict(status=status, code=_text(error.get("code")), field=_text(error.get("field")),
                    request_id=request_id)
        if status == 401:
            return RazorpayAuthenticationError(message, **args)
        if status >= 500 or status < 400:
            return RazorpayUnavailable(message, **args)
        return RazorpayBadRequest(message, **args)

    def _exchange(self, method: str, path: str, headers: dict[str, str],
                  payload: bytes | None) -> tuple[int, dict[str, str], bytes]:
        """One request on a kept-alive connection of the process's pool (payments.acquirer.transport),
        bounded end to end by self.timeout."""
        return exchange(self._address, method, path, headers, payload, timeout=self.timeout,
                        too_large=lambda status: RazorpayBadResponse("Razorpay's answer was larger than we read",
                                                                     status=status))
