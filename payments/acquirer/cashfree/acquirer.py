"""The Cashfree acquirer: the gateway's `Acquirer` protocol (payments/acquirer/base.py) carried
by Cashfree's Payment Gateway API through client.py. docs/going-live.md maps every flow.

How the protocol meets Cashfree's model:

- One Cashfree order per payment, its order_id our txn id (`sabpaisa_txn_id`), created the first
  time a method needs it and read back after (creating it again with the same idempotency key
  answers the same order; an order that exists already is fetched). Each method the customer
  starts is an "order pay" on that order: a payment attempt of Cashfree's (`cf_payment_id`).
- Every create (order, order pay, refund) carries an x-idempotency-key derived from our own ids
  (the txn id, the step, the hosted attempt), so the same call sent again after a timeout is
  answered, not repeated.
- Cashfree decides money on its own pages (the issuer's 3-D Secure page, the bank's, the
  wallet's) and in the payer's UPI app. The gateway learns the result from Cashfree's status
  query (get payments for order), never from the customer's redirect back, and from its
  webhooks (received elsewhere). So card_verify_otp, bank_authorize, transfer_received,
  call_status and upi_status all read the same status query; a payment attempt that is not
  final there yet is AcquirerUnavailable ("ask again later"), which leaves the gateway's
  payment PROCESSING for the cut-off sweep.
- Errors: Cashfree refusing the request (4xx) is AcquirerRefused (PAYMENT_FAILED); no usable
  answer (timeout, 5xx, 429, an unreadable reply) is AcquirerUnavailable
  (SERVICE_UNAVAILABLE); refused credentials, and anything else, AcquirerError
  (PROCESSING_ERROR). A bank's "no" on an order pay (502 bank_processing_failure) is an answer:
  DECLINED.
- Card numbers and CVVs go into the one order pay request body (client.pay_card) and nowhere
  else: not into an answer's `raw`, a log line or an exception message.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

from django.conf import settings
from django.views.decorators.debug import sensitive_variables

from payments.acquirer.base import (
    AcquirerAnswer,
    AcquirerError,
    AcquirerRefused,
    AcquirerUnavailable,
    CardFields,
    DisputeFound,
    EvidenceFile,
    NoticeDelivery,
    Outcome,
    RealAcquirer,
    SettlementPage,
    TransferAccount,
)
from payments.cards import CardInput
from payments.lookups import mobile_digits
from payments.models import Payment

from . import answers, disputes, notices, settlements
from . import client as cf
from .answers import NotFinal
from .client import CashfreeClient, Customer, PayAnswer, idempotency_key
from .money import paise_to_rupees, rupees_to_paise
from .errors import (
    CashfreeAuthenticationError,
    CashfreeBadRequest,
    CashfreeDeclined,
    CashfreeError,
    CashfreeUnavailable,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The hosted checkout's methods Cashfree carries. A cash challan is paid over a bank counter
# against a reference of ours; Cashfree's API has no such method (docs/going-live.md).
METHODS = frozenset({"UPI", "CARD", "NB", "WALLET", "NEFT", "RTGS"})

# Our net banking codes (payments.acquirer.sandbox.acquirer.BANKS, the IFSC prefixes) to Cashfree's
# four-digit netbanking_bank_code (Cashfree's published list of net banking codes).
NETBANKING_CODES = {"SBIN": 3044, "HDFC": 3021, "ICIC": 3022, "UTIB": 3003, "KKBK": 3032, "PUNB": 3038}
# Our wallet codes to Cashfree's `app` providers.
WALLET_PROVIDERS = {"PAYTM": "paytm", "PHONEPE": "phonepe", "AMAZONPAY": "amazon", "MOBIKWIK": "mobikwik"}
# What the checkout lists (Acquirer.banks, .wallets): the banks and wallets above, by name.
BANKS = {"SBIN": "State Bank of India", "HDFC": "HDFC Bank", "ICIC": "ICICI Bank", "UTIB": "Axis Bank",
         "KKBK": "Kotak Mahindra Bank", "PUNB": "Punjab National Bank"}
WALLETS = {"PAYTM": "Paytm", "PHONEPE": "PhonePe", "AMAZONPAY": "Amazon Pay", "MOBIKWIK": "MobiKwik"}

# Cashfree's payment_group of each of our steps' payments.
_UPI_GROUPS = {"upi", "upi_ppi", "upi_credit_card", "upi_ppi_offline"}
_CARD_GROUPS = {"credit_card", "debit_card", "prepaid_card", "corporate_credit_card", "card"}
_BANK_GROUPS = {"net_banking", "wallet", "app"}
_TRANSFER_GROUPS = {"bank_transfer", "banktransfer"}
_CONFLICT = 409  # Cashfree: an order or refund with that id exists already
_STEP_GROUPS = {"card_verify_otp": _CARD_GROUPS, "bank_authorize": _BANK_GROUPS,
                "transfer_received": _TRANSFER_GROUPS}


def _mapped(call: Callable[[], T], what: str) -> T:
    """Run one Cashfree call, turning its errors into the protocol's three (module docstring).
    The message names the call and Cashfree's code and request id, never a request body."""
    try:
        return call()
    except CashfreeUnavailable as exc:
        raise AcquirerUnavailable(f"Cashfree {what}: {exc}") from None
    except CashfreeAuthenticationError as exc:
        logger.error("Cashfree refused our credentials on %s (%s)", what, exc)
        raise AcquirerError(f"Cashfree {what}: credentials refused ({exc})") from None
    except CashfreeBadRequest as exc:
        raise AcquirerRefused(f"Cashfree {what}: {exc}") from None
    except CashfreeError as exc:
        raise AcquirerError(f"Cashfree {what}: {exc}") from None
    except ValueError as exc:
        # Our data is outside what Cashfree takes (client.py checks before sending).
        raise AcquirerRefused(f"Cashfree {what}: {exc}") from None


# The status query that confirms a failure notice: short, since Cashfree waits for our answer.
CONFIRM_TIMEOUT_SECONDS = 5.0


def webhook_secret() -> str:
    """The key Cashfree signs webhooks with: CASHFREE_WEBHOOK_SECRET where the account has one,
    else the PG client secret (Cashfree's docs)."""
    return settings.CASHFREE_WEBHOOK_SECRET or settings.CASHFREE_CLIENT_SECRET


def client_from_settings(*, timeout: float) -> CashfreeClient:
    """A client of the account and address the settings name (CASHFREE_*; the address defaults
    by GATEWAY_ENV in gateway.settings), its calls bounded by `timeout` seconds."""
    return CashfreeClient(base_url=settings.CASHFREE_BASE_URL, client_id=settings.CASHFREE_CLIENT_ID,
                          client_secret=settings.CASHFREE_CLIENT_SECRET, timeout=timeout)


def _phone(payment: Payment) -> str:
    """The customer's 10-digit mobile number, as Cashfree's customer_phone wants it."""
    digits = mobile_digits(payment.customer_phone)
    if not digits:
        raise AcquirerRefused("Cashfree needs the customer's 10-digit mobile number")
    return digits


def _customer(payment: Payment) -> Customer:
    # Cashfree's customer_id names a customer of the merchant's account: stable for the same
    # merchant, email and phone, and revealing neither.
    phone = _phone(payment)
    digest = hashlib.sha256(f"{payment.merchant_id}|{payment.customer_email.lower()}|{phone}".encode())
    # Email and name are optional at Cashfree but 3 to 100 characters when sent: one outside
    # that is left out rather than cut (a cut email is another address).
    return Customer(customer_id="gwc_" + digest.hexdigest()[:32], phone=phone,
                    email=_within(payment.customer_email.strip(), 3, 100),
                    name=_within(payment.customer_name.strip(), 3, 100))


def _within(value: str, low: int, high: int) -> str:
    return value if low <= len(value) <= high else ""


def _attempt(payment: Payment) -> str:
    return str(payment.attempt)


class CashfreeAcquirer(RealAcquirer):
    """The protocol over one Cashfree merchant account. Holds configuration only: thread-safe.
    From RealAcquirer: any payer VPA is taken (the payer's bank decides) and nothing happens
    on our side while a UPI answer is awaited (Cashfree's webhook or the status query brings it)."""

    name = "cashfree"
    methods = METHODS
    banks = BANKS
    wallets = WALLETS
    # Cashfree's create order requires customer_details.customer_phone (10 digits): the
    # checkout asks the customer when the session came without one (_phone refuses otherwise).
    requires_customer_phone = True

    def __init__(self, client: CashfreeClient | None = None):
        """Without arguments (get_acquirer), the account and address of the settings."""
        self.client = client or client_from_settings(timeout=settings.CASHFREE_TIMEOUT_SECONDS)

    def supports(self, method: str) -> bool:
        return method in self.methods

    # -- the order and its payments -----------------------------------------------------------

    def _key(self, payment: Payment, *parts: str) -> str:
        return idempotency_key(payment.sabpaisa_txn_id, *parts)

    def _session(self, payment: Payment, return_url: str) -> str:
        """The payment_session_id of the payment's Cashfree order, creating the order once, with
        `return_url` (the service's: where Cashfree sends the customer back after its pages)."""
        order_id = payment.sabpaisa_txn_id
        customer = _customer(payment)

        def create() -> cf.Order:
            try:
                return self.client.create_order(
                    order_id=order_id, amount=payment.amount, customer=customer,
                    idempotency_key=self._key(payment, "order"), return_url=return_url,
                    note=_within((payment.description or "").strip()[:200], 3, 200))
            except CashfreeBadRequest as exc:
                if exc.status != _CONFLICT:
                    raise
                # Created before under another key (Cashfree keeps keys for a while only).
                return self.client.get_order(order_id)

        order = _mapped(create, "create order")
        if not order.payment_session_id:
            raise AcquirerError(f"Cashfree order {order_id} has no payment session")
        if order.amount is not None and order.amount != payment.amount:
            raise AcquirerError(f"Cashfree order {order_id} is for {order.amount} paise, not {payment.amount}")
        return order.payment_session_id

    def _pay(self, payment: Payment, what: str, pay: Callable[[str], PayAnswer],
             return_url: str = "") -> PayAnswer | AcquirerAnswer:
        """Order pay on the payment's order. A bank's refusal is returned as DECLINED."""
        session = self._session(payment, return_url)

        def attempt() -> PayAnswer | None:
            try:
                return pay(session)
            except CashfreeDeclined:
                return None

        answer = _mapped(attempt, what)
        if answer is None:
            return AcquirerAnswer(Outcome.DECLINED, message="declined by the bank",
                                  raw={"result": "declined", "step": what})
        return answer

    def _payments(self, payment: Payment) -> list[cf.Payment]:
        """Every payment attempt on the payment's order (Cashfree's status query); an order
        Cashfree does not know has none."""
        try:
            return _mapped(lambda: self.client.get_payments(payment.sabpaisa_txn_id), "get payments")
        except AcquirerRefused:
            return []

    def _status(self, payment: Payment, groups: set[str], *, cf_payment_id: str = "",
                payer_vpa: str = "") -> AcquirerAnswer:
        """The status query for one of our steps: an approved payment of the order wins (money
        moved, whichever attempt); else the step's latest attempt at Cashfree. Raises
        AcquirerRefused when Cashfree has no such attempt."""
        found = self._payments(payment)
        if cf_payment_id:
            mine = [p for p in found if p.cf_payment_id == cf_payment_id]
        else:
            mine = [p for p in found if p.payment_group in groups]
            if payer_vpa:
                mine = [p for p in mine if _upi_id(p) in ("", payer_vpa)]
        if not mine and not any(p.status in answers.APPROVED for p in found):
            raise AcquirerRefused(f"Cashfree has no such payment on order {payment.sabpaisa_txn_id}")
        return answers.order_answer(found, among=mine)

    # -- UPI ----------------------------------------------------------------------------------

    def upi_register(self, *, payment: Payment) -> AcquirerAnswer:
        """S2S UPI_QR and UPI_INTENT: an order and a UPI intent payment on it; `link` is
        Cashfree's own upi://pay link, for upiQrString or intentUrl. Cashfree's qrcode channel
        answers a PNG image, not a string, so the QR is the same link drawn by the merchant
        (as in staging): docs/going-live.md."""
        answer = self._pay(payment, "upi intent", lambda session: self.client.pay_upi_intent(
            payment_session_id=session, idempotency_key=self._key(payment, "upi_register")))
        if isinstance(answer, AcquirerAnswer):
            raise AcquirerRefused("Cashfree declined the UPI payment")
        link = upi_intent_link(answer.payload)
        if not link:
            raise AcquirerError("Cashfree's UPI intent answer carried no upi:// link")
        return AcquirerAnswer(Outcome.PENDING, link=link,
                              raw={"cf_payment_id": answer.cf_payment_id, "channel": answer.channel,
                                   "registered": payment.sabpaisa_txn_id, "upi_link": link})

    def upi_intent(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        """Hosted UPI by app or QR: order pay upi/link for the payment's current attempt (the
        idempotency key names it, so asking again answers the same link). `link` is Cashfree's
        own upi://pay link (payload `default`), drawn as the QR on a wide screen; `raw["upi_apps"]`
        the per-app links of the payload (gpay, phonepe, paytm, bhim), the phone's app buttons."""
        answer = self._pay(payment, "upi intent", lambda session: self.client.pay_upi_intent(
            payment_session_id=session, idempotency_key=self._key(payment, "upi_intent", _attempt(payment))),
            return_url)
        if isinstance(answer, AcquirerAnswer):
            raise AcquirerRefused("Cashfree declined the UPI payment")
        link = upi_intent_link(answer.payload)
        if not link:
            raise AcquirerError("Cashfree's UPI intent answer carried no upi:// link")
        payload = answer.payload if isinstance(answer.payload, dict) else {}
        apps = {name: value for name, value in payload.items()
                if name != "default" and isinstance(value, str) and value.isascii() and "://" in value
                and len(value) <= 2000}
        return AcquirerAnswer(Outcome.PENDING, link=link,
                              raw={"cf_payment_id": answer.cf_payment_id, "channel": answer.channel,
                                   "upi_link": link, "upi_apps": apps})

    def upi_collect(self, *, payment: Payment, vpa: str, return_url: str = "") -> AcquirerAnswer:
        return self._collect(payment, vpa, "upi_collect", return_url)

    def upi_pay(self, *, payment: Payment, payer_vpa: str, return_url: str = "") -> AcquirerAnswer:
        # A real payer's app pays Cashfree's own link; the gateway is told by webhook or the
        # status query. Asked to take a payment from a VPA, the gateway sends a collect
        # request to it: the payer approves it in the same app.
        return self._collect(payment, payer_vpa, "upi_pay", return_url)

    def _collect(self, payment: Payment, vpa: str, step: str, return_url: str) -> AcquirerAnswer:
        vpa = vpa.strip().lower()
        answer = self._pay(payment, "upi collect", lambda session: self.client.pay_upi_collect(
            payment_session_id=session, vpa=vpa, idempotency_key=self._key(payment, step, _attempt(payment), vpa)),
            return_url)
        if isinstance(answer, AcquirerAnswer):
            return answer
        return AcquirerAnswer(Outcome.PENDING, raw={"cf_payment_id": answer.cf_payment_id, "channel": answer.channel,
                                                    "result": "collect request sent"})

    def upi_status(self, *, payment: Payment, payer_vpa: str) -> AcquirerAnswer:
        try:
            return self._status(payment, _UPI_GROUPS, payer_vpa=payer_vpa.strip().lower())
        except NotFinal:
            return AcquirerAnswer(Outcome.PENDING, raw={"result": "awaiting approval"})

    def upi_cancel(self, *, payment: Payment, payer_vpa: str) -> AcquirerAnswer:
        """Cashfree cannot withdraw one payment of an order, and terminating the order (PATCH
        /orders/{order_id}) would end the customer's next method too. So: APPROVED when the
        payer approved first; otherwise AcquirerError, and an approval arriving later finds
        its attempt over and is reversed (payments.services.reversals)."""
        answer = self.upi_status(payment=payment, payer_vpa=payer_vpa)
        if answer.outcome in (Outcome.APPROVED, Outcome.DECLINED):
            return answer
        raise AcquirerError("Cashfree cannot cancel one UPI request of an order; a late approval is reversed")

    # -- cards --------------------------------------------------------------------------------

    @sensitive_variables("card")
    def card_authorize(self, *, payment: Payment, card: CardInput, return_url: str = "") -> AcquirerAnswer:
        """Order pay by card: Cashfree answers with the issuer's 3-D Secure page (`link`). The
        challenge id (`reference`) is Cashfree's cf_payment_id, which card_verify_otp asks
        Cashfree about once the customer is back."""
        answer = self._pay(payment, "card pay", lambda session: self.client.pay_card(
            payment_session_id=session, card=card, idempotency_key=self._key(payment, "card", _attempt(payment)),
            holder_name=_within(payment.customer_name.strip(), 3, 100)), return_url)
        if isinstance(answer, AcquirerAnswer):
            return answer
        if not answer.cf_payment_id or not answer.url:
            raise AcquirerError("Cashfree's card answer carried no 3-D Secure page")
        return AcquirerAnswer(Outcome.CHALLENGE, reference=answer.cf_payment_id, link=answer.url,
                              raw={"cf_payment_id": answer.cf_payment_id, "action": answer.action,
                                   "result": "3ds on the issuer's page", "last4": card.last4})

    def card_fields(self) -> CardFields | None:
        """Cashfree.js v3's card components (CASHFREE_JS_URL): the page starts it with
        Cashfree({mode}) and pays with cashfree.pay({paymentMethod, paymentSessionId}). Its
        origins: the script's own (its fields' frames) and the API's (CASHFREE_BASE_URL), which
        the script calls with the payment session."""
        origins = tuple(dict.fromkeys(_origin(url) for url in (settings.CASHFREE_JS_URL, settings.CASHFREE_BASE_URL)))
        return CardFields(script=settings.CASHFREE_JS_URL, origins=origins,
                          options={"mode": "production" if settings.IS_PRODUCTION else "sandbox"})

    def card_fields_open(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        """The payment's order (created once, with `return_url`): its payment_session_id is what
        Cashfree.js pays with. The card goes from Cashfree's fields to Cashfree in the browser;
        no order pay of ours carries it. What Cashfree answers is read back by call_status
        (card_verify_otp with no challenge: the order's newest card payment)."""
        session = self._session(payment, return_url)
        return AcquirerAnswer(Outcome.PENDING, reference=session,
                              raw={"order_id": payment.sabpaisa_txn_id, "result": "card fields opened"})

    def card_verify_otp(self, *, payment: Payment, otp: str, challenge_ref: str) -> AcquirerAnswer:
        """The customer is back from the issuer's page. Whatever the page said (or `otp`, which
        Cashfree never sees), the answer is Cashfree's status of the challenge's payment."""
        if not challenge_ref:
            return AcquirerAnswer(Outcome.DECLINED, message="3-D Secure authentication failed (no challenge)",
                                  raw={"result": "no challenge"})
        return self._status(payment, _CARD_GROUPS, cf_payment_id=challenge_ref)

    # -- net banking, wallets, transfers ------------------------------------------------------

    def bank_redirect(self, *, payment: Payment, mode: str, bank_code: str, return_url: str = "") -> AcquirerAnswer:
        """Net banking (NB) or wallet (WALLET): order pay, answering PENDING with the bank's or
        wallet's page (`link`) to send the customer to; it comes back to the checkout's return
        view, where bank_authorize's status query (call_status) decides."""
        key = self._key(payment, "bank", _attempt(payment))
        if mode == "NB":
            code = NETBANKING_CODES.get(bank_code)
            if code is None:
                raise AcquirerRefused(f"Cashfree has no net banking code for {bank_code}")
            pay = lambda session: self.client.pay_netbanking(payment_session_id=session, bank_code=code,  # noqa: E731
                                                             idempotency_key=key)
        else:
            provider = WALLET_PROVIDERS.get(bank_code)
            if provider is None:
                raise AcquirerRefused(f"Cashfree has no wallet {bank_code}")
            phone = _phone(payment)
            pay = lambda session: self.client.pay_wallet(payment_session_id=session, provider=provider,  # noqa: E731
                                                         phone=phone, idempotency_key=key)
        answer = self._pay(payment, "bank pay", pay, return_url)
        if isinstance(answer, AcquirerAnswer):
            return answer
        return AcquirerAnswer(Outcome.PENDING, link=answer.url,
                              raw={"cf_payment_id": answer.cf_payment_id, "result": "sent to the bank's page"})

    def bank_authorize(self, *, payment: Payment, bank_code: str, approved: bool) -> AcquirerAnswer:
        """The customer is back from the bank's or wallet's page; `approved` is what the page
        said and is not trusted: the answer is Cashfree's status query. A customer who never
        reached Cashfree's page and says no is DECLINED (nothing can have moved)."""
        try:
            return self._status(payment, _BANK_GROUPS)
        except AcquirerRefused:
            if not approved:
                return AcquirerAnswer(Outcome.DECLINED, message="cancelled before the bank's page",
                                      raw={"bank": bank_code, "result": "declined"})
            raise

    def transfer_details(self, *, payment: Payment, return_url: str = "") -> TransferAccount:
        """NEFT / RTGS: order pay by bank transfer; Cashfree answers with the account the
        customer transfers to (`payload`). Asked again for the same attempt, the same
        idempotency key answers the same account. The description leaves that payload untyped
        (docs/going-live.md): its account number and IFSC are read under Cashfree's names, with
        or without the `banktransfer_` prefix of its payment entity, and an answer without
        both is an AcquirerError (the checkout fails the attempt: nothing was paid)."""
        answer = self._pay(payment, "bank transfer", lambda session: self.client.pay_bank_transfer(
            payment_session_id=session, idempotency_key=self._key(payment, "transfer", _attempt(payment))),
            return_url)
        if isinstance(answer, AcquirerAnswer):
            raise AcquirerRefused("Cashfree declined the bank transfer")
        payload = answer.payload if isinstance(answer.payload, dict) else {}

        def read(*names: str) -> str:
            return next((str(payload[name]) for prefix in ("", "banktransfer_") for name in
                         (prefix + n for n in names) if payload.get(name) not in (None, "")), "")

        account, ifsc = read("account_number"), read("ifsc")
        if not account or not ifsc:
            raise AcquirerError("Cashfree's bank transfer answer carried no account number and IFSC")
        return TransferAccount(beneficiary=read("beneficiary_name", "account_holder", "name") or "Cashfree Payments",
                               bank=read("bank_name"), ifsc=ifsc.upper(), account=account, branch=read("branch"))

    def transfer_received(self, *, payment: Payment, amount: int) -> AcquirerAnswer:
        return self._status(payment, _TRANSFER_GROUPS)

    def call_status(self, *, payment: Payment, step: str) -> AcquirerAnswer:
        challenge = payment.card_challenge_ref if step == "card_verify_otp" else ""
        return self._status(payment, _STEP_GROUPS.get(step, set()), cf_payment_id=challenge)

    # -- refunds ------------------------------------------------------------------------------

    def refund(self, *, payment: Payment, amount: int, refund_id: str) -> AcquirerAnswer:
        """Create refund `refund_id` (idempotent on it: Cashfree refuses a second refund with the
        same id, and then the first is read back). SUCCESS is APPROVED with Cashfree's refund id;
        CANCELLED DECLINED; PENDING / ONHOLD PENDING (the refund webhook or the next
        submission finalises it)."""
        order_id = payment.sabpaisa_txn_id
        refund_id = cashfree_refund_id(refund_id)
        read = lambda: self.client.get_refund(order_id, refund_id)  # noqa: E731

        def create() -> cf.Refund:
            try:
                created = self.client.create_refund(order_id=order_id, refund_id=refund_id, amount=amount,
                                                    idempotency_key=self._key(payment, "refund", refund_id))
            except CashfreeBadRequest as exc:
                if exc.status != _CONFLICT:
                    raise
                return read()  # a refund with this id exists: the first submission's
            # Sent again (the sweep), the same key replays the first answer: read the refund as
            # it stands now.
            return created if created.status in answers.REFUND_FINAL else read()

        try:
            refund = _mapped(create, "refund")
        except AcquirerRefused as refused:  # Cashfree will not refund this (amount, order state)
            return AcquirerAnswer(Outcome.DECLINED, message=str(refused)[:200], raw={"result": "refused"})
        return answers.refund_answer(refund)

    def refund_ref(self, refund_id: str) -> str:
        return cashfree_refund_id(refund_id)

    # -- disputes (disputes.py reads Cashfree's entity, for these and for its webhooks) ---------

    def disputes_of(self, *, payment: Payment) -> list[DisputeFound]:
        found = _mapped(lambda: self.client.get_order_disputes(payment.sabpaisa_txn_id), "disputes of an order")
        return [self._dispute(entity, payment.sabpaisa_txn_id) for entity in found]

    def dispute_get(self, *, processor_id: str) -> DisputeFound:
        return self._dispute(_mapped(lambda: self.client.get_dispute(processor_id), "dispute"))

    def dispute_accept(self, *, processor_id: str) -> DisputeFound:
        return self._dispute(_mapped(lambda: self.client.accept_dispute(processor_id), "dispute accept"))

    def dispute_evidence_submit(self, *, processor_id: str, evidence: EvidenceFile) -> DisputeFound:
        digest = hashlib.sha256(evidence.content).hexdigest()
        key = idempotency_key("dispute-document", processor_id, evidence.doc_type, digest)
        return self._dispute(_mapped(lambda: self.client.upload_dispute_document(
            processor_id, doc_type=evidence.doc_type, filename=evidence.filename,
            content_type=evidence.content_type, content=evidence.content, idempotency_key=key,
            note=evidence.note), "dispute evidence"))

    @staticmethod
    def _dispute(entity: dict, order_ref: str = "") -> DisputeFound:
        try:
            found = disputes.dispute_found(entity)
        except CashfreeError as exc:
            raise AcquirerError(f"Cashfree dispute: {exc}") from None
        # An order's disputes name the order by the path asked; an entity may leave it out.
        return found if found.order_ref or not order_ref else replace(found, order_ref=order_ref)
    # -- its settlements (settlements.py): POST /settlements and POST /settlement/recon -------

    def settlements_list(self, *, start, end, cursor: str = "") -> SettlementPage:
        return _mapped(lambda: settlements.settlements_page(self.client, start=start, end=end, cursor=cursor),
                       "settlements")

    def settlement_events(self, *, settlement_id: str, cursor: str = "") -> SettlementPage:
        return _mapped(lambda: settlements.events_page(self.client, settlement_id=settlement_id, cursor=cursor),
                       "settlement recon")

    # -- its notices (webhooks), received at the gateway's inbound door -----------------------

    def notice_verify(self, *, headers, raw_body: bytes) -> NoticeDelivery:
        return notices.notice_verify(secret=webhook_secret(), headers=headers, raw_body=raw_body)

    def notice_parse(self, payload: dict):
        return notices.notice_parse(payload)

    def notice_confirm(self, *, payment: Payment, notice):
        # Short: Cashfree waits for the door's answer.
        return notices.notice_confirm(client_from_settings(timeout=CONFIRM_TIMEOUT_SECONDS), notice)

    def amount_to_acquirer(self, paise: int):
        return paise_to_rupees(paise)

    def amount_from_acquirer(self, value) -> int:
        return rupees_to_paise(value)

    def reverse(self, *, payment: Payment, bank_rrn: str, amount: int, reversal_id: str) -> AcquirerAnswer:
        """A refund of the whole approval, under refund id `reversal_id` (idempotent on it).
        While Cashfree's refund is PENDING the answer is PENDING, and the reversal is sent
        again later (payments.services.reversals), which reads it as it then stands."""
        answer = self.refund(payment=payment, amount=amount, refund_id=reversal_id)
        return AcquirerAnswer(answer.outcome, reference=answer.reference, message=answer.message,
                              raw={**answer.raw, "approval": bank_rrn})


def cashfree_refund_id(refund_id: str) -> str:
    """The refund_id Cashfree knows our refund by: ours when it fits Cashfree's 3 to 40
    characters, else one derived from it (a merchant's refundId may have 1 to 64): the same on
    every submission, so Cashfree refunds it once."""
    if 3 <= len(refund_id) <= 40:
        return refund_id
    return "gwr_" + hashlib.sha256(refund_id.encode()).hexdigest()[:32]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _upi_id(found: cf.Payment) -> str:
    method = found.raw.get("payment_method")
    upi = method.get("upi") if isinstance(method, dict) else None
    return str(upi.get("upi_id") or "").lower() if isinstance(upi, dict) else ""


def upi_intent_link(payload) -> str:
    """The upi://pay link of Cashfree's intent answer (payload `default`, or any app's). Public:
    the smoke run (manage.py acquirer_smoke) reads its answers with it too."""
    if not isinstance(payload, dict):
        return ""
    links = [payload.get("default"), *payload.values()]
    return next((link for link in links if isinstance(link, str) and link.lower().startswith("upi://")), "")
