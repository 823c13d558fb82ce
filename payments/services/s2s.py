"""S2S UPI payment creation (POST /api/v2/payments/s2s; docs/s2s.md).

The order a request is decided in, each step's error code in brackets:
  0. (the view) API key and X-Merchant-Id (UNAUTHORIZED), S2S enabled (S2S_NOT_ENABLED),
     Content-Type, X-Idempotency-Key's form and a JSON object body (VALIDATION_ERROR);
  1. (payments.api.s2s_serializers) the fields, in the interface's order (VALIDATION_ERROR
     naming the field); then, only with an acquirer that requires the customer's mobile
     (Acquirer.requires_customer_phone: Cashfree), customerPhone must read as a 10-digit
     number (s2s_customer_phone_check: VALIDATION_ERROR naming customerPhone, before any call);
  2. paymentMode is UPI_QR or UPI_INTENT (INVALID_PAYMENT_MODE);
  3. merchantId is the API key's merchant (UNAUTHORIZED);
  4. timestamp present, not in the future (INVALID_TIMESTAMP), not older than 5 minutes
     (REQUEST_EXPIRED);
  5. checksum = HMAC-SHA256(secret, merchantId|merchantTxnId|amount|currency|webhookUrl|timestamp),
     or over the interface's merchantId|merchantTxnId|amount|currency|timestamp, which leaves
     webhookUrl out (INVALID_SIGNATURE);
  6. X-Idempotency-Key: a stored response is answered again, another body is
     IDEMPOTENCY_MISMATCH (payments.services.idempotency);
  7. merchantTxnId not used before by this merchant (DUPLICATE_TRANSACTION); then the checksum's
     first use (gateway.core.replay: another request with it is INVALID_SIGNATURE, the same
     request again goes on; without Redis, it goes on);
  8. the merchantTxnId is claimed (payments.services.txn_claims: another request creating it
     this moment is DUPLICATE_TRANSACTION, or SERVICE_UNAVAILABLE with an idempotency key), then
     the acquirer registers the payment, once (PAYMENT_FAILED / SERVICE_UNAVAILABLE /
     PROCESSING_ERROR), with no transaction of ours open and no row locked (with a key, its
     record is in flight, committed, not locked);
  9. one statement: the payment in PROCESSING and its events (and, with a key, the stored
     response); the unique constraint payment_unique_merchant_txn turns a lost race into
     DUPLICATE_TRANSACTION.

A start the acquirer refuses writes nothing: merchantTxnId stays unused and the merchant may
retry it (docs/s2s.md, Retrying after PAYMENT_FAILED).
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import NamedTuple

from django.db import IntegrityError
from django.utils import timezone

from gateway.platform.auth import ensure_same_merchant
from gateway.core.errors import (
    DuplicateTransaction,
    InvalidPaymentMode,
    PaymentFailed,
    ProcessingError,
    ServiceUnavailable,
    ValidationError,
)
from gateway.platform.models import Merchant
from gateway.core.replay import checksum_use, request_digest
from gateway.core.signing import (
    CREATION_CHECKSUM_NAMES,
    S2S_FULL_CHECKSUM_NAMES,
    verify_checksum_of_any,
    verify_timestamp,
)
from gateway.core.tracing import current_trace_id
from payments.acquirer import acquirer_named
from payments.acquirer.limits import LimitReached
from payments.acquirer.base import AcquirerAnswer, AcquirerError, AcquirerRefused, AcquirerUnavailable, Outcome
from payments.lookups import mobile_digits
from payments.models import Payment, PaymentEvent
from payments.payloads import UDF_KEYS
from payments.services.idempotency import Lease, LeaseLost, idempotency_run, request_fingerprint
from payments.services.idempotency import Outcome as IdempotentOutcome
from payments.services.routing import routed_answer, routed_call, routes_as_set
from payments.services.txn_claims import ClaimBusy, TxnClaim, txn_claim_held, txn_claim_take
from payments.services.upi import upi_link
from payments.writes import KeyResponse, payment_insert_with_events

logger = logging.getLogger("payments.s2s")

UNIQUE_MERCHANT_TXN = "payment_unique_merchant_txn"
# 201 Created (interface.md names no code; the live API answers 201 and merchant code checks for
# it): the stored response of an idempotency key carries it, so a replay repeats it.
CREATED = 201
CREATED_MESSAGE = "Payment created; show the QR or open the intent link. The final status arrives by webhook."


def s2s_customer_phone_check(data: dict, *, merchant: Merchant) -> None:
    """Step 1's last check. An acquirer that requires the customer's mobile (Cashfree's create
    order: customer_details.customer_phone, ten digits) has no page to ask the customer on in
    S2S, and the gateway does not invent one (docs/upstream-compat.md): a customerPhone that
    does not read as ten digits (separators, +91 and a leading 0 are taken off, as the acquirer
    is sent it) is a VALIDATION_ERROR naming the field, before the checksum is used and before
    any call. With an acquirer that needs none (the sandbox), any phone the interface allows
    goes on. With a route of two acquirers, the phone is asked for if either needs it (the
    payment may fail over to the second)."""
    # The route as staff set it, not route_for: reading health there would take the probe of an
    # acquirer out of rotation, which belongs to the payment's own routing.
    route = routes_as_set(merchant.pk, ["UPI"])["UPI"]
    requires_phone = any(acquirer_named(name).requires_customer_phone for name in route)
    if requires_phone and not mobile_digits(data.get("customerPhone") or ""):
        raise ValidationError("must be the customer's 10-digit mobile number (+91 or a leading 0 may be "
                              "added): the payment processor requires it", field="customerPhone")


def s2s_request_check(*, merchant: Merchant, data: dict, body: dict) -> dict:
    """Steps 2 to 5 on fields that passed step 1 (payments.api.s2s_serializers): the mode, the
    merchant, the timestamp and the checksum. Returns the fields with the timestamp as an int.
    Raises the GatewayError of the first step that fails."""
    if data["paymentMode"] not in Payment.S2SMode.values:
        raise InvalidPaymentMode()
    ensure_same_merchant(merchant, data["merchantId"])
    timestamp = verify_timestamp(body.get("timestamp"))
    # Compared exactly (docs/decisions.md): uppercase hex is INVALID_SIGNATURE, as on every endpoint.
    # The full base string signs webhookUrl (where this payment's data goes; "" when not sent);
    # the interface's, which SDK 1.0.1 sends with a webhookUrl, does not: its checksum is then
    # used once (s2s_payment_submit).
    fields = (data["merchantId"], data["merchantTxnId"], data["amount"], data["currency"])
    verify_checksum_of_any(merchant.secret_key, data["checksum"], (*fields, data.get("webhookUrl") or "", timestamp),
                           (*fields, timestamp), names=CREATION_CHECKSUM_NAMES, full_names=S2S_FULL_CHECKSUM_NAMES)
    return {**data, "timestamp": timestamp}


def s2s_payment_submit(*, merchant: Merchant, data: dict, body: dict,
                       idempotency_key: str | None) -> IdempotentOutcome:
    """POST /api/v2/payments/s2s after authentication and field validation (`data` is the
    validated fields of `body`): steps 2 to 9. Creates the payment at most once per idempotency
    key and returns the HTTP status and response body (replayed=True when it is the stored
    response of an earlier request). Raises GatewayError."""
    s2s_customer_phone_check(data, merchant=merchant)
    data = s2s_request_check(merchant=merchant, data=data, body=body)

    def first_use() -> None:
        # Where the payment would be created: a replay the key or merchantTxnId already answers
        # (IDEMPOTENCY_MISMATCH, DUPLICATE_TRANSACTION) is answered so, as the interface says.
        checksum_use(merchant_pk=merchant.pk, checksum=data["checksum"], timestamp=data["timestamp"],
                     repeat=request_digest(body), fail_closed=False)

    def create(lease: Lease) -> tuple[int, dict]:
        # The acquirer first, with the key's record in flight but not locked. The response is
        # then known before the insert (the ids are ours), so the payment, its events and the
        # stored response go to the database as one statement.
        first_use()
        try:
            claim = txn_claim_take(merchant=merchant, merchant_txn_id=data["merchantTxnId"], key=idempotency_key)
        except ClaimBusy as busy:
            if not busy.same_key:
                raise DuplicateTransaction() from None
            # The request whose lapsed lease this one took over is still calling the acquirer:
            # a retry with the key gets what it stores.
            raise ServiceUnavailable("a request with this X-Idempotency-Key is still being created; retry later.") \
                from None
        with txn_claim_held(claim):
            registration = s2s_payment_register(merchant=merchant, data=data, claim=claim)
            response = s2s_response(registration.payment, link=registration.answer.link)
            if not s2s_payment_record(registration, response=lease.response(CREATED, response)):
                raise LeaseLost()
        return CREATED, response

    if idempotency_key is None:
        registration = _s2s_create(merchant=merchant, data=data, first_use=first_use)
        return IdempotentOutcome(CREATED, s2s_response(registration.payment, link=registration.answer.link),
                                 replayed=False)
    # Step 7 is asked as the key is taken.
    return idempotency_run(merchant=merchant, key=idempotency_key, fingerprint=request_fingerprint(body),
                           merchant_txn_id=data["merchantTxnId"], create=create)


class Registration(NamedTuple):
    """A payment the acquirer accepted, not yet saved, and the acquirer's answer."""
    payment: Payment
    answer: AcquirerAnswer


def s2s_payment_create(*, merchant: Merchant, data: dict) -> Payment:
    """Steps 7 to 9 without an idempotency key: merchantTxnId unused, register with the
    acquirer, then create the payment in PROCESSING with mode UPI. Raises
    DuplicateTransaction, PaymentFailed, ServiceUnavailable or ProcessingError; on any of them
    nothing is written."""
    return _s2s_create(merchant=merchant, data=data).payment


def _s2s_create(*, merchant: Merchant, data: dict, first_use=None) -> Registration:
    """s2s_payment_create, answering the acquirer's answer with the payment (its link).
    `first_use`, when given, runs once merchantTxnId is known to be unused."""
    try:
        # DuplicateTransaction when a payment has the merchantTxnId: answered without troubling
        # the acquirer, and in the claim's own statement.
        claim = txn_claim_take(merchant=merchant, merchant_txn_id=data["merchantTxnId"])
    except ClaimBusy:
        raise DuplicateTransaction() from None  # another request is creating it this moment
    with txn_claim_held(claim):
        if first_use is not None:
            first_use()  # refused (a replayed checksum): the claim's lease ends, its ids kept, as on any error
        registration = s2s_payment_register(merchant=merchant, data=data, claim=claim)
        s2s_payment_record(registration)
    return registration


def s2s_payment_register(*, merchant: Merchant, data: dict, claim: TxnClaim) -> Registration:
    """Step 8, writing nothing: the acquirer's acceptance, for the payment `claim` holds the
    merchantTxnId and the ids of (payments.services.txn_claims). Call it with no transaction
    open. Raises PaymentFailed, ServiceUnavailable or ProcessingError."""
    now = timezone.now()
    payment = Payment(
        sabpaisa_txn_id=claim.sabpaisa_txn_id,
        payment_id=claim.payment_id,
        merchant=merchant,
        flow=Payment.Flow.S2S,
        merchant_txn_id=data["merchantTxnId"],
        amount=data["amount"],
        currency=data["currency"],
        status=Payment.Status.PROCESSING,
        payment_mode=Payment.Mode.UPI,
        s2s_mode=data["paymentMode"],
        customer_name=data["customerName"],
        customer_email=data["customerEmail"],
        customer_phone=data["customerPhone"],
        description=data.get("description") or "",
        metadata=data.get("metadata") or {},
        udf={key: data[key] for key in UDF_KEYS if data.get(key) is not None},
        order_details=data.get("order_details") or {},
        webhook_url=data.get("webhookUrl") or "",
        expires_at=now + timedelta(minutes=data["upiExpiryMinutes"]),
    )
    return Registration(payment, _register(payment))


def s2s_payment_record(registration: Registration, *, response: KeyResponse | None = None) -> bool:
    """Step 9: save the registered payment in PROCESSING with its events, in one statement
    (payments.writes), which is atomic by itself. With an idempotency key, `response` is the
    one to store in the key's record: the same statement stores it, and writes nothing
    (returning False) if the key is no longer this request's. Returns True when written.
    Raises DuplicateTransaction when another request took the merchantTxnId meanwhile."""
    payment, answer = registration
    try:
        return payment_insert_with_events(payment, [
            PaymentEvent(payment=payment, kind=PaymentEvent.Kind.STATUS, from_status="", to_status=payment.status,
                         detail={"flow": "S2S", "paymentMode": payment.s2s_mode, "traceId": current_trace_id(),
                                 "expiresAt": payment.expires_at.isoformat()}),
            PaymentEvent(payment=payment, kind=PaymentEvent.Kind.ACQUIRER,
                         detail={"step": "upi_register", **answer.raw}),
        ], response=response)
    except IntegrityError as exc:
        if _constraint(exc) == UNIQUE_MERCHANT_TXN:
            # Another request with this merchantTxnId committed between our check and insert.
            raise DuplicateTransaction() from None
        raise


def _register(payment: Payment):
    """Ask the acquirer to accept the QR / intent. No payment row exists yet, so no lock is held."""
    try:
        answer = routed_answer(routed_call(payment, "UPI", lambda acquirer: acquirer.upi_register(payment=payment),
                                           step="upi_register"))
    except AcquirerRefused as exc:
        logger.warning("acquirer refused S2S payment %s: %s", payment.merchant_txn_id, exc)
        raise PaymentFailed() from None
    except AcquirerUnavailable as exc:
        logger.warning("acquirer unavailable for S2S payment %s: %s", payment.merchant_txn_id, exc)
        if isinstance(exc, LimitReached):  # no call was made, or the processor said when to retry
            raise ServiceUnavailable(headers={"Retry-After": str(exc.retry_after)}) from None
        raise ServiceUnavailable() from None
    except AcquirerError as exc:
        logger.error("acquirer error on S2S payment %s: %s", payment.merchant_txn_id, exc)
        raise ProcessingError() from None
    if answer.outcome != Outcome.PENDING:
        logger.warning("acquirer answered %s to S2S payment %s", answer.outcome, payment.merchant_txn_id)
        raise PaymentFailed(answer.message or None)
    return answer


def _constraint(exc: IntegrityError) -> str | None:
    diag = getattr(exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None)


def s2s_response(payment: Payment, *, link: str = "") -> dict:
    """The success body (interface.md, S2S UPI payment response), plus expiresAt. `link`: the
    acquirer's own upi://pay link when it issued one (AcquirerAnswer.link), else the gateway's."""
    link = link or upi_link(payment)
    is_qr = payment.s2s_mode == Payment.S2SMode.UPI_QR
    return {
        "success": True,
        "paymentId": payment.payment_id,
        "txnId": payment.sabpaisa_txn_id,
        "merchantTxnId": payment.merchant_txn_id,
        "status": payment.status,
        "amount": payment.amount,
        "currency": payment.currency,
        "paymentMode": payment.s2s_mode,
        "upiQrString": link if is_qr else None,
        "intentUrl": None if is_qr else link,
        "expiresAt": payment.expires_at.isoformat().replace("+00:00", "Z"),
        "message": CREATED_MESSAGE,
        "traceId": current_trace_id(),
    }
