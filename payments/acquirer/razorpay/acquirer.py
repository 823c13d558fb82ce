"""The Razorpay acquirer: the gateway's `Acquirer` protocol (payments/acquirer/base.py) carried by
Razorpay's Payments API through client.py. docs/going-live.md ("Razorpay") maps every flow.

How the protocol meets Razorpay's model:

- One Razorpay order per payment, its `receipt` our txn id (`sabpaisa_txn_id`) and a note of the
  same, created the first time a method needs it. Razorpay's creates take no idempotency key, so
  the order is looked for by its receipt before it is created (and remembered per process: the
  mapping never changes). Each method the customer starts is an S2S payment on that order
  (`pay_...`), carrying the txn id and the hosted attempt in its notes.
- Razorpay decides money on its own pages (the issuer's 3-D Secure page, the bank's, the
  wallet's) and in the payer's UPI app. The gateway learns the result from the status query (the
  order's payments), never from the customer's redirect back, and from Razorpay's webhooks. So
  card_verify_otp, bank_authorize, call_status and upi_status all read the same status query. A
  payment Razorpay holds `authorized` is captured there and then (the capture is what takes the
  money; Razorpay refunds an uncaptured one by itself), and answered as captured.
- Errors: Razorpay refusing the request (4xx) is AcquirerRefused (PAYMENT_FAILED); no usable
  answer (timeout, 5xx, a 429 past its time, an unreadable reply) is AcquirerUnavailable
  (SERVICE_UNAVAILABLE); refused credentials, AcquirerError (PROCESSING_ERROR).
- Cards: Razorpay's own page takes the number by default (CARD_FORM_MODE=processor, where the
  gateway's form is not offered): Razorpay Standard Checkout (checkout.js), opened on the
  payment's order, draws Razorpay's own frame over the checkout page; the card goes from it to
  Razorpay, and its handler brings razorpay_payment_id, razorpay_order_id and
  razorpay_signature back to the checkout's return address, where card_fields_said checks the
  signature (HMAC-SHA256 of "order_id|payment_id" with the key secret) before the status query
  decides (docs/decisions.md, "Razorpay's card page"). card_authorize, with our own form
  (CARD_FORM_MODE=own, which production allows only beside PCI_DSS_COMPLIANT=true), sends the
  card in the one S2S JSON body and answers the issuer's 3-D Secure page; the number goes
  nowhere else.
- NEFT / RTGS and challans are not carried (Razorpay's Smart Collect accounts are another
  product): `methods` leaves them out, so the checkout never offers them with Razorpay.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
from datetime import datetime, timedelta, timezone
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.views.decorators.debug import sensitive_variables

from gateway.core import redisguard
from payments.acquirer.base import (
    AcquirerAnswer,
    AcquirerError,
    AcquirerRefused,
    AcquirerUnavailable,
    CardFields,
    NoticeDelivery,
    NoticeMalformed,
    NoticeRejected,
    Outcome,
    RealAcquirer,
    SettlementEventFound,
    SettlementFound,
    SettlementPage,
    TransferAccount,
)
from payments.cards import CardInput
from payments.lookups import mobile_digits
from payments.models import Payment

from . import answers, notices
from .answers import NotFinal
from .client import Created, Order, RazorpayClient
from .client import Payment as RzpPayment
from .errors import RazorpayAuthenticationError, RazorpayBadRequest, RazorpayError, RazorpayUnavailable
from .money import paise_in, paise_out

logger = logging.getLogger(__name__)

T = TypeVar("T")

METHODS = frozenset({"UPI", "CARD", "NB", "WALLET"})
# Our net banking codes (the IFSC prefixes the checkout lists) are Razorpay's bank codes, but
# Punjab National Bank's retail banking, which Razorpay codes PUNB_R.
NETBANKING_CODES = {"SBIN": "SBIN", "HDFC": "HDFC", "ICIC": "ICIC", "UTIB": "UTIB", "KKBK": "KKBK", "PUNB": "PUNB_R"}
BANKS = {"SBIN": "State Bank of India", "HDFC": "HDFC Bank", "ICIC": "ICICI Bank", "UTIB": "Axis Bank",
         "KKBK": "Kotak Mahindra Bank", "PUNB": "Punjab National Bank"}
# Our wallet codes to Razorpay's `wallet` values (Razorpay no longer carries the Paytm wallet).
WALLET_CODES = {"PHONEPE": "phonepe", "AMAZONPAY": "amazonpay", "MOBIKWIK": "mobikwik"}
WALLETS = {"PHONEPE": "PhonePe", "AMAZONPAY": "Amazon Pay", "MOBIKWIK": "MobiKwik"}

_STEP_METHODS = {"card_verify_otp": {"card", "emi"}, "bank_authorize": {"netbanking", "wallet", "app"},
                 "transfer_received": {"bank_transfer"}}
CONFIRM_TIMEOUT_SECONDS = 5.0  # the status query behind a notice: Razorpay waits for our answer
_INTENT_SECONDS = 3600  # how long the link of one attempt's intent is answered again
_ORDERS_REMEMBERED = 10_000
SETTLEMENTS_PER_PAGE = 100  # Razorpay's largest `count`
_IST = timezone(timedelta(hours=5, minutes=30))


def _mapped(call: Callable[[], T], what: str) -> T:
    """Run one Razorpay call, turning its errors into the protocol's three (module docstring)."""
    try:
        return call()
    except RazorpayUnavailable as exc:
        raise AcquirerUnavailable(f"Razorpay {what}: {exc}") from None
    except RazorpayAuthenticationError as exc:
        logger.error("Razorpay refused our credentials on %s (%s)", what, exc)
        raise AcquirerError(f"Razorpay {what}: credentials refused ({exc})") from None
    except RazorpayBadRequest as exc:
        raise AcquirerRefused(f"Razorpay {what}: {exc}") from None
    except RazorpayError as exc:
        raise AcquirerError(f"Razorpay {what}: {exc}") from None
    except ValueError as exc:  # our data is outside what Razorpay takes (client.py checks before sending)
        raise AcquirerRefused(f"Razorpay {what}: {exc}") from None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@sensitive_variables("secret")
def checkout_signature_valid(secret: str, *, order_id: str, payment_id: str, signature: str) -> bool:
    """Whether `signature` is what Razorpay's checkout signs a successful payment with: the hex
    HMAC-SHA256 of "order_id|payment_id" under the key secret (Razorpay's docs, "Verify Payment
    Signature"). Constant time."""
    expected = hmac.new(secret.encode(), f"{order_id}|{payment_id}".encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.strip().lower().encode())


def client_from_settings(*, timeout: float) -> RazorpayClient:
    return RazorpayClient(base_url=settings.RAZORPAY_BASE_URL, key_id=settings.RAZORPAY_KEY_ID,
                          key_secret=settings.RAZORPAY_KEY_SECRET, timeout=timeout)


def razorpay_refund_id(refund_id: str) -> str:
    """The receipt Razorpay knows our refund (or reversal) by: ours when it fits Razorpay's 40
    characters, else one derived from it, the same on every submission."""
    if 1 <= len(refund_id) <= 40:
        return refund_id
    return "gwr_" + hashlib.sha256(refund_id.encode()).hexdigest()[:32]


def _cached(key: str):
    try:
        return cache.get(key)
    except redisguard.OUTAGE_ERRORS + (redisguard.RedisUnavailable,):
        return None


def _remember(key: str, value, seconds: int) -> None:
    try:
        cache.set(key, value, seconds)
    except redisguard.OUTAGE_ERRORS + (redisguard.RedisUnavailable,):
        pass


class RazorpayAcquirer(RealAcquirer):
    """The protocol over one Razorpay account. Holds configuration and a map of txn id to
    Razorpay order id (which never changes): thread-safe. From RealAcquirer: any payer VPA is
    taken, and a UPI answer awaited is asked about by the status query each period."""

    name = "razorpay"
    methods = METHODS
    banks = BANKS
    wallets = WALLETS
    # Razorpay's S2S payments require the customer's contact number.
    requires_customer_phone = True

    def __init__(self, client: RazorpayClient | None = None):
        self.client = client or client_from_settings(timeout=settings.RAZORPAY_TIMEOUT_SECONDS)
        self._orders: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    # -- the order and its payments -----------------------------------------------------------

    def _notes(self, payment: Payment, **more: str) -> dict[str, str]:
        return {notices.TXN_NOTE: payment.sabpaisa_txn_id, **more}

    def _order_id(self, payment: Payment, *, create: bool) -> str:
        """The Razorpay order of `payment`: remembered, else found by its receipt, else (with
        `create`) created. "" when there is none and `create` is False."""
        txn = payment.sabpaisa_txn_id
        with self._lock:
            if txn in self._orders:
                return self._orders[txn]
        found = _mapped(lambda: self.client.orders_by_receipt(txn), "find order")
        order = next((o for o in found if o.receipt == txn), None)
        if order is None:
            if not create:
                return ""
            order = _mapped(lambda: self.client.create_order(amount=payment.amount, receipt=txn,
                                                             notes=self._notes(payment)), "create order")
        self._check_amount(payment, order)
        with self._lock:
            self._orders[txn] = order.id
            while len(self._orders) > _ORDERS_REMEMBERED:
                self._orders.popitem(last=False)
        return order.id

    @staticmethod
    def _check_amount(payment: Payment, order: Order) -> None:
        if order.amount != payment.amount:
            raise AcquirerError(f"Razorpay order {order.id} is for {order.amount} paise, not {payment.amount}")

    def _payer(self, payment: Payment, order_id: str, method: str, attempt: str, return_url: str) -> dict:
        """The body every S2S payment of ours starts with."""
        contact = mobile_digits(payment.customer_phone)
        if not contact:
            raise AcquirerRefused("Razorpay needs the customer's 10-digit mobile number")
        body = {"amount": paise_out(payment.amount), "currency": "INR", "order_id": order_id, "method": method,
                "contact": contact, "notes": self._notes(payment, attempt=attempt)}
        if payment.customer_email.strip():
            body["email"] = payment.customer_email.strip()
        if return_url:
            body["callback_url"] = return_url
        return body

    def _create(self, what: str, payment: Payment, create: Callable[[str], Created]) -> Created | AcquirerAnswer:
        """Open the order and create one S2S payment on it. A refusal of the payment itself (the
        bank or Razorpay said no to this method) is answered DECLINED."""
        order_id = self._order_id(payment, create=True)
        try:
            return _mapped(lambda: create(order_id), what)
        except AcquirerRefused as refused:
            return AcquirerAnswer(Outcome.DECLINED, message=str(refused)[:200], raw={"result": "refused", "step": what})

    def _payments(self, payment: Payment) -> list[RzpPayment]:
        order_id = self._order_id(payment, create=False)
        if not order_id:
            return []
        found = _mapped(lambda: self.client.order_payments(order_id), "get payments")
        return [self._captured(payment, p) for p in found]

    def _captured(self, payment: Payment, found: RzpPayment) -> RzpPayment:
        """An `authorized` payment of the full amount, captured (answers.py's docstring)."""
        if found.status != answers.AUTHORIZED or found.amount != payment.amount:
            return found

        def capture() -> RzpPayment:
            try:
                return self.client.capture(payment_id=found.id, amount=found.amount)
            except RazorpayBadRequest:  # captured meanwhile (by another worker, or the account's auto-capture)
                return self.client.get_payment(found.id)

        return _mapped(capture, "capture")

    def _status(self, payment: Payment, methods: set[str], *, payment_id: str = "",
                payer_vpa: str = "") -> AcquirerAnswer:
        """The status query for one of our steps: a captured payment of the order wins (money
        moved, whichever attempt); else the step's newest payment. AcquirerRefused when Razorpay
        has no such payment."""
        found = self._payments(payment)
        if payment_id:
            mine = [p for p in found if p.id == payment_id]
        else:
            mine = [p for p in found if p.method in methods and (not payer_vpa or p.vpa in ("", payer_vpa))]
        if not mine and not any(p.status in answers.APPROVED for p in found):
            raise AcquirerRefused(f"Razorpay has no such payment for {payment.sabpaisa_txn_id}")
        return answers.order_answer(found, among=mine)

    # -- UPI ----------------------------------------------------------------------------------

    def _intent(self, payment: Payment, attempt: str, return_url: str) -> AcquirerAnswer:
        key = f"razorpay:intent:{payment.sabpaisa_txn_id}:{attempt}"
        remembered = _cached(key)
        if isinstance(remembered, dict) and remembered.get("upi_link"):
            return AcquirerAnswer(Outcome.PENDING, link=remembered["upi_link"], raw=remembered)
        created = self._create("upi intent", payment, lambda order_id: self.client.create_payment_upi(
            body={**self._payer(payment, order_id, "upi", attempt, return_url), "upi": {"flow": "intent"}}))
        if isinstance(created, AcquirerAnswer):
            raise AcquirerRefused(f"Razorpay declined the UPI payment ({created.message})")
        if not created.link:
            raise AcquirerError("Razorpay's UPI intent answer carried no upi:// link")
        raw = {"razorpay_payment_id": created.payment_id, "upi_link": created.link, "upi_apps": {}}
        _remember(key, raw, _INTENT_SECONDS)
        return AcquirerAnswer(Outcome.PENDING, link=created.link, raw=raw)

    def upi_register(self, *, payment: Payment) -> AcquirerAnswer:
        """S2S UPI_QR and UPI_INTENT: an order and a UPI intent payment on it; `link` is
        Razorpay's own upi://pay link, for upiQrString or intentUrl (the QR draws the same link)."""
        return self._intent(payment, "s2s", "")

    def upi_intent(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        """Hosted UPI by app or QR: a UPI intent payment for the payment's current attempt;
        asked again for the same attempt, the same link."""
        return self._intent(payment, str(payment.attempt), return_url)

    def upi_collect(self, *, payment: Payment, vpa: str, return_url: str = "") -> AcquirerAnswer:
        return self._collect(payment, vpa, return_url)

    def upi_pay(self, *, payment: Payment, payer_vpa: str, return_url: str = "") -> AcquirerAnswer:
        # As at Cashfree: asked to take a payment from a VPA, the gateway sends a collect request.
        return self._collect(payment, payer_vpa, return_url)

    def _collect(self, payment: Payment, vpa: str, return_url: str) -> AcquirerAnswer:
        vpa = vpa.strip().lower()
        created = self._create("upi collect", payment, lambda order_id: self.client.create_payment_upi(
            body={**self._payer(payment, order_id, "upi", str(payment.attempt), return_url),
                  "upi": {"flow": "collect", "vpa": vpa}}))
        if isinstance(created, AcquirerAnswer):
            return created
        return AcquirerAnswer(Outcome.PENDING, raw={"razorpay_payment_id": created.payment_id,
                                                    "result": "collect request sent"})

    def upi_status(self, *, payment: Payment, payer_vpa: str) -> AcquirerAnswer:
        try:
            return self._status(payment, {"upi"}, payer_vpa=payer_vpa.strip().lower())
        except NotFinal:
            return AcquirerAnswer(Outcome.PENDING, raw={"result": "awaiting approval"})

    def upi_cancel(self, *, payment: Payment, payer_vpa: str) -> AcquirerAnswer:
        """Razorpay's API cannot withdraw a UPI request: APPROVED when the payer approved first,
        DECLINED when it failed; otherwise AcquirerError, and an approval arriving later finds
        its attempt over and is reversed (payments.services.reversals)."""
        answer = self.upi_status(payment=payment, payer_vpa=payer_vpa)
        if answer.outcome in (Outcome.APPROVED, Outcome.DECLINED):
            return answer
        raise AcquirerError("Razorpay cannot cancel a UPI request; a late approval is reversed")

    # -- cards --------------------------------------------------------------------------------

    @sensitive_variables("card")
    def card_authorize(self, *, payment: Payment, card: CardInput, return_url: str = "") -> AcquirerAnswer:
        """Our own card form (module docstring): an S2S card payment, answered with the issuer's
        3-D Secure page (`link`); the challenge id is Razorpay's payment id."""
        created = self._create("card pay", payment, lambda order_id: self.client.create_payment_json(
            body=self._payer(payment, order_id, "card", str(payment.attempt), return_url), card=card))
        if isinstance(created, AcquirerAnswer):
            return created
        if not created.url:
            raise AcquirerError("Razorpay's card answer carried no 3-D Secure page")
        return AcquirerAnswer(Outcome.CHALLENGE, reference=created.payment_id, link=created.url,
                              raw={"razorpay_payment_id": created.payment_id, "result": "3ds on the issuer's page",
                                   "last4": card.last4})

    def card_fields(self) -> CardFields | None:
        """Razorpay Standard Checkout (RAZORPAY_CHECKOUT_JS_URL): the page opens it with
        new Razorpay({key, order_id, handler, modal: {ondismiss}}).open(), and its frame (from
        the API's origin) takes the card. Its origins: the script's own and the API's
        (RAZORPAY_BASE_URL); that the real script needs no other is a guess until a test account
        shows it (docs/going-live.md). `key` is the key id, which Razorpay publishes to every
        customer's browser by design; the secret never leaves this process."""
        origins = tuple(dict.fromkeys(_origin(url) for url in (settings.RAZORPAY_CHECKOUT_JS_URL,
                                                               settings.RAZORPAY_BASE_URL)))
        return CardFields(script=settings.RAZORPAY_CHECKOUT_JS_URL, origins=origins,
                          options={"key": settings.RAZORPAY_KEY_ID}, api="razorpay-checkout-v1", inline=False)

    def card_fields_open(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        """The payment's order (found or created once): its id is what the checkout opens
        Razorpay's frame on. No payment of ours carries the card; what the frame paid is read
        back by call_status (card_verify_otp with no challenge: the order's newest card payment).
        The order id is no bearer (it pays nothing without the customer's card), yet it is not
        kept in the story either, as for every processor."""
        order_id = self._order_id(payment, create=True)
        return AcquirerAnswer(Outcome.PENDING, reference=order_id, raw={"result": "card page opened"})

    def card_fields_said(self, *, payment: Payment, said: dict[str, str]) -> str:
        """Standard Checkout's handler answer, brought back by the checkout's page: the payment id
        it names when razorpay_signature is the hex HMAC-SHA256 of "order_id|payment_id" under
        the key secret (compared in constant time) and the order is this payment's. "" when it
        carries none of the three (the frame was closed, or the payment failed in it)."""
        payment_id, order_id, signature = (str(said.get(name) or "") for name in (
            "razorpay_payment_id", "razorpay_order_id", "razorpay_signature"))
        if not (payment_id or order_id or signature):
            return ""
        if not (payment_id and order_id and signature):
            raise NoticeMalformed("Razorpay's checkout answer lacks its payment id, order id or signature")
        if not checkout_signature_valid(settings.RAZORPAY_KEY_SECRET, order_id=order_id, payment_id=payment_id,
                                        signature=signature):
            raise NoticeRejected("the checkout answer's razorpay_signature does not match")
        try:
            ours = self._order_id(payment, create=False)
        except AcquirerError:
            ours = order_id  # not asked now: the signature stands, and the status query reads our own order
        if order_id != ours:
            raise NoticeRejected("the checkout answer names another order")
        return payment_id

    def card_verify_otp(self, *, payment: Payment, otp: str, challenge_ref: str) -> AcquirerAnswer:
        """The customer is back from the issuer's page: Razorpay's status of the challenge's payment."""
        if not challenge_ref:
            return AcquirerAnswer(Outcome.DECLINED, message="3-D Secure authentication failed (no challenge)",
                                  raw={"result": "no challenge"})
        return self._status(payment, _STEP_METHODS["card_verify_otp"], payment_id=challenge_ref)

    # -- net banking, wallets -----------------------------------------------------------------

    def bank_redirect(self, *, payment: Payment, mode: str, bank_code: str, return_url: str = "") -> AcquirerAnswer:
        """Net banking (NB) or a wallet (WALLET): an S2S payment answered with the bank's or
        wallet's page (`link`); the customer comes back to the checkout's return view, where
        bank_authorize's status query decides."""
        if mode == "NB":
            code = NETBANKING_CODES.get(bank_code)
            if code is None:
                raise AcquirerRefused(f"Razorpay has no net banking code for {bank_code}")
            extra, method = {"bank": code}, "netbanking"
        else:
            code = WALLET_CODES.get(bank_code)
            if code is None:
                raise AcquirerRefused(f"Razorpay has no wallet {bank_code}")
            extra, method = {"wallet": code}, "wallet"
        created = self._create("bank pay", payment, lambda order_id: self.client.create_payment_json(
            body={**self._payer(payment, order_id, method, str(payment.attempt), return_url), **extra}))
        if isinstance(created, AcquirerAnswer):
            return created
        if not created.url:
            raise AcquirerError("Razorpay's answer carried no page for the bank")
        return AcquirerAnswer(Outcome.PENDING, link=created.url,
                              raw={"razorpay_payment_id": created.payment_id, "result": "sent to the bank's page"})

    def bank_authorize(self, *, payment: Payment, bank_code: str, approved: bool) -> AcquirerAnswer:
        try:
            return self._status(payment, _STEP_METHODS["bank_authorize"])
        except AcquirerRefused:
            if not approved:
                return AcquirerAnswer(Outcome.DECLINED, message="cancelled before the bank's page",
                                      raw={"bank": bank_code, "result": "declined"})
            raise

    def transfer_details(self, *, payment: Payment, return_url: str = "") -> TransferAccount:
        raise AcquirerError("Razorpay does not carry NEFT / RTGS here (docs/going-live.md)")

    def transfer_received(self, *, payment: Payment, amount: int) -> AcquirerAnswer:
        return self._status(payment, _STEP_METHODS["transfer_received"])

    def call_status(self, *, payment: Payment, step: str) -> AcquirerAnswer:
        challenge = payment.card_challenge_ref if step == "card_verify_otp" else ""
        return self._status(payment, _STEP_METHODS.get(step, set()), payment_id=challenge)

    # -- refunds and reversals ----------------------------------------------------------------

    def _refund(self, payment: Payment, razorpay_payment_id: str, amount: int, receipt: str) -> AcquirerAnswer:
        """Refund `amount` of Razorpay's payment under `receipt`, once: a refund with that receipt
        is read back, not created again (Razorpay's refunds take no idempotency key)."""
        def create():
            existing = [r for r in self.client.payment_refunds(razorpay_payment_id) if r.receipt == receipt]
            if existing:
                return existing[0]
            return self.client.create_refund(payment_id=razorpay_payment_id, amount=amount, receipt=receipt,
                                             notes=self._notes(payment, **{notices.REFUND_NOTE: receipt}))

        try:
            refund = _mapped(create, "refund")
        except AcquirerRefused as refused:  # Razorpay will not refund this (amount, payment state)
            return AcquirerAnswer(Outcome.DECLINED, message=str(refused)[:200], raw={"result": "refused"})
        return answers.refund_answer(refund)

    def _captured_payment(self, payment: Payment, reference: str = "") -> RzpPayment | None:
        captured = [p for p in self._payments(payment) if p.status in answers.APPROVED]
        named = [p for p in captured if reference and answers.payment_reference(p) == reference]
        return (named or captured or [None])[0]

    def refund(self, *, payment: Payment, amount: int, refund_id: str) -> AcquirerAnswer:
        """Refund `amount` of the payment's captured Razorpay payment under our `refund_id`:
        processed is APPROVED (the bank's ARN), failed DECLINED, pending PENDING (the refund
        webhook or the next submission finalises it)."""
        found = self._captured_payment(payment, payment.bank_rrn)
        if found is None:
            return AcquirerAnswer(Outcome.DECLINED, message="Razorpay holds no captured payment for it",
                                  raw={"result": "nothing captured"})
        return self._refund(payment, found.id, amount, razorpay_refund_id(refund_id))

    def refund_ref(self, refund_id: str) -> str:
        return razorpay_refund_id(refund_id)

    def reverse(self, *, payment: Payment, bank_rrn: str, amount: int, reversal_id: str) -> AcquirerAnswer:
        """A refund of the approval `bank_rrn` (the captured payment carrying that reference),
        under receipt `reversal_id`: idempotent on it."""
        found = self._captured_payment(payment, bank_rrn)
        if found is None:
            return AcquirerAnswer(Outcome.DECLINED, message="Razorpay holds no captured payment to reverse",
                                  raw={"result": "nothing captured", "approval": bank_rrn})
        answer = self._refund(payment, found.id, amount, razorpay_refund_id(reversal_id))
        return AcquirerAnswer(answer.outcome, reference=answer.reference, message=answer.message,
                              raw={**answer.raw, "approval": bank_rrn})

    # -- its notices (webhooks), received at the gateway's inbound door -----------------------

    def notice_verify(self, *, headers, raw_body: bytes) -> NoticeDelivery:
        return notices.notice_verify(secret=settings.RAZORPAY_WEBHOOK_SECRET, headers=headers, raw_body=raw_body)

    def notice_parse(self, payload: dict):
        return notices.notice_parse(payload)

    def notice_confirm(self, *, payment: Payment, notice):
        """The status query of the order behind a notice not taken at its word: a captured
        payment wins; the decline stands only when the newest payment is the notice's own and
        failed; else None."""
        confirming = RazorpayAcquirer(client_from_settings(timeout=CONFIRM_TIMEOUT_SECONDS))
        found = confirming._payments(payment)
        if any(p.status in answers.APPROVED for p in found):
            return answers.order_answer(found)
        latest = answers.newest(found)
        if latest is None or latest.id != notice.attempt_ref or latest.status not in answers.DECLINED:
            return None
        return answers.payment_answer(latest)

    # -- what it paid out ---------------------------------------------------------------------

    def settlements_list(self, *, start: datetime | None, end: datetime | None, cursor: str = "") -> SettlementPage:
        """Razorpay's payouts (GET /settlements, paged by `skip`: the cursor). Razorpay states the
        net amount, its fees and the tax on them; the gross is their sum."""
        skip = int(cursor) if cursor.isdigit() else 0
        found = _mapped(lambda: self.client.settlements(
            start=int(start.timestamp()) if start else None, end=int(end.timestamp()) if end else None,
            skip=skip, count=SETTLEMENTS_PER_PAGE), "settlements")
        items = tuple(SettlementFound(settlement_id=s.id, utr=s.utr, gross=s.amount + s.fees + s.tax, fees=s.fees, tax=s.tax, net=s.amount,
                                      settled_at=datetime.fromtimestamp(s.created_at, tz=timezone.utc)
                                      if s.created_at else None, status=s.status) for s in found)
        return SettlementPage(items=items, cursor=str(skip + len(found)) if len(found) == SETTLEMENTS_PER_PAGE else "")

    def settlement_events(self, *, settlement_id: str, cursor: str = "") -> SettlementPage:
        """The lines of payout `settlement_id`: Razorpay's recon is asked by day, so the payout's
        own day (IST) is read (GET /settlements/{id}, then /settlements/recon/combined, paged by
        `skip`: the cursor) and its lines kept. A payment line names our payment by its order's
        receipt (our txn id), a refund line ours by its note. The recon's shape is from Razorpay's
        docs, no fixture: docs/going-live.md."""
        found = _mapped(lambda: self.client.get_settlement(settlement_id), "settlement")
        day = datetime.fromtimestamp(found.created_at, tz=_IST)
        skip = int(cursor) if cursor.isdigit() else 0
        lines = _mapped(lambda: self.client.recon(year=day.year, month=day.month, day=day.day, skip=skip,
                                                  count=SETTLEMENTS_PER_PAGE), "settlement recon")
        kinds = {"payment": "payment", "refund": "refund", "dispute": "chargeback", "adjustment": "adjustment"}
        items = tuple(SettlementEventFound(
            event_id=line.entity_id, kind=kinds.get(line.type, "adjustment"), amount=line.amount, fee=line.fee,
            tax=line.tax, order_ref=line.order_receipt or str(line.notes.get(notices.TXN_NOTE) or ""),
            payment_ref=line.entity_id if line.type == "payment" else line.payment_id,
            refund_ref=str(line.notes.get(notices.REFUND_NOTE) or "") if line.type == "refund" else "",
            event_type=line.type) for line in lines if line.settlement_id == settlement_id)
        return SettlementPage(items=items, cursor=str(skip + len(lines)) if len(lines) == SETTLEMENTS_PER_PAGE else "")

    def amount_to_acquirer(self, paise: int):
        return paise_out(paise)

    def amount_from_acquirer(self, value) -> int:
        return paise_in(value)
