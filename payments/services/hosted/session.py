"""The checkout session: opening it, its deadline, and leaving the page (cancelling, or the
signed redirect back to the merchant)."""
from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from gateway.core.errors import DuplicateTransaction
from gateway.platform.methods import ensure_some_method_takes
from payments.services.acquirer_methods import acquirer_methods
from gateway.platform.models import Merchant
from gateway.core.signing import return_signature
from payments.locks import lock_payment
from payments.models import Payment, PaymentEvent
from payments.services.transitions import payment_expire, payment_mark_failed, payment_note
from payments.writes import payment_insert_with_events
from payments.lookups import client_secret_hash
from payments.state import InvalidTransition
from tokens import services as token_services
from tokens.models import Token

S = Payment.Status


def checkout_url(payment: Payment) -> str:
    """GATEWAY_PUBLIC_URL + the page's path, with no query string: clients append
    ?clientSecret=... themselves (CONTRACT.md)."""
    return settings.GATEWAY_PUBLIC_URL + reverse("checkout:page", args=[payment.payment_id])


@dataclass(frozen=True)
class HostedSession:
    payment: Payment
    client_secret: str  # shown once, in the creation response; only its hash is stored

    @property
    def checkout_url(self) -> str:
        return checkout_url(self.payment)


def hosted_payment_create(*, merchant: Merchant, merchant_txn_id: str, amount: int, currency: str,
                          return_url: str, customer_name: str = "", customer_email: str = "",
                          customer_phone: str = "", description: str = "", metadata: dict | None = None,
                          udf: dict | None = None, order_details: dict | None = None,
                          token: Token | None = None, language: str = "",
                          expires_at: datetime | None = None) -> HostedSession:
    """Open a checkout session: a PENDING hosted payment that expires after
    CHECKOUT_SESSION_TTL_SECONDS (the expiry sweep ends it then; payments.services.expiry). With `token`
    (from tokens.selectors.token_get_usable) the checkout offers that saved card; `language`
    (as the merchant sent it) is the page's language (payments.checkout.language). `expires_at`
    replaces the session's lifetime (a payment link lasts up to 30 days).
    Raises ValidationError naming amount when no method the merchant offers takes `amount`
    (gateway.platform.methods), DuplicateTransaction when the merchant already used `merchant_txn_id`
    (in either flow), which the database constraint payment_unique_merchant_txn guarantees."""
    ensure_some_method_takes(merchant.payment_methods, amount, carried=acquirer_methods(merchant.pk))
    client_secret = secrets.token_urlsafe(32)  # [A-Za-z0-9_-]: safe to append to a URL unencoded
    payment = Payment(
        merchant=merchant, flow=Payment.Flow.HOSTED, status=S.PENDING,
        merchant_txn_id=merchant_txn_id, amount=amount, currency=currency, return_url=return_url,
        customer_name=customer_name, customer_email=customer_email, customer_phone=customer_phone,
        description=description, metadata=metadata or {}, udf=udf or {}, order_details=order_details or {},
        language=language,
        client_secret_hash=client_secret_hash(client_secret),
        expires_at=expires_at or timezone.now() + timedelta(seconds=settings.CHECKOUT_SESSION_TTL_SECONDS),
    )
    event = PaymentEvent(payment=payment, kind=PaymentEvent.Kind.STATUS, to_status=S.PENDING,
                         detail={"reason": "checkout session created",
                                 **({"tokenId": token.token_id} if token else {})})
    try:
        if token is None and not transaction.get_connection().in_atomic_block:
            # The API's hottest write: the payment and its event in one statement, atomic by
            # itself, so no BEGIN and COMMIT either (payments.writes).
            payment_insert_with_events(payment, [event])
        else:
            # With a token, its link commits with the payment. Inside a caller's transaction
            # this is a savepoint, so that transaction survives a duplicate.
            with transaction.atomic():
                payment_insert_with_events(payment, [event])
                if token is not None:
                    token_services.token_payment_link(token=token, payment_pk=payment.pk,
                                                      merchant_id=payment.merchant_id)
    except IntegrityError as exc:
        if _is_duplicate_txn(exc):
            raise DuplicateTransaction(f"merchantTxnId {merchant_txn_id!r} has already been used") from None
        raise
    return HostedSession(payment, client_secret)


def _is_duplicate_txn(exc: IntegrityError) -> bool:
    diag = getattr(getattr(exc, "__cause__", None), "diag", None)
    if diag is not None and getattr(diag, "constraint_name", None):
        return diag.constraint_name == "payment_unique_merchant_txn"
    # SQLite names the columns instead of the constraint.
    text = str(exc)
    return "payment_unique_merchant_txn" in text or "payments_payment.merchant_txn_id" in text


def hosted_expire_if_due(payment: Payment) -> Payment:
    """The page itself expires a session whose time is up, so a customer never pays into one
    the sweep has not reached yet. Returns the payment as it now is."""
    if not payment.is_final and payment.expires_at <= timezone.now():
        payment_expire(payment_id=payment.pk)
        payment.refresh_from_db()
    return payment


def _ensure_open(payment: Payment) -> None:
    """A method may start only on a PENDING session whose time is not up."""
    hosted_expire_if_due(payment)
    if payment.status != S.PENDING:
        raise InvalidTransition(payment.status, S.PROCESSING)


# --- Leaving the page ---------------------------------------------------------------------

def hosted_cancel(*, payment: Payment) -> Payment:
    """The customer gave up before choosing a method: PENDING -> FAILED ("cancelled by the
    customer"), final like any failure. A session whose time was already up is EXPIRED, as any
    other action would find it. Raises InvalidTransition once a method is in flight or the
    session is final."""
    hosted_expire_if_due(payment)
    if payment.status != S.PENDING:
        raise InvalidTransition(payment.status, S.FAILED)
    return payment_mark_failed(payment_id=payment.pk, reason="cancelled by the customer",
                               detail={"reason": "cancelled by the customer"})


def return_params(payment: Payment, *, now: float | None = None) -> dict:
    """The gateway's own parameters of the return redirect (CONTRACT.md), amounts in paise."""
    return {
        "transaction_id": payment.sabpaisa_txn_id,
        "merchant_txn_id": payment.merchant_txn_id,
        "status": payment.status,
        "amount": str(payment.amount),
        "paid_amount": str(payment.paid_amount or 0),
        "payment_mode": payment.payment_mode or "",
        "timestamp": str(int(time.time() if now is None else now)),
    }


def hosted_return_url(payment: Payment, *, now: float | None = None) -> str:
    """returnUrl with the result added and signed. The signature covers the final set of query
    parameters, the merchant's own included, exactly as the merchant will read them
    (request.GET.dict(): decoded, the last of a repeated key). Ours win over a merchant
    parameter of the same name, and a repeated key is sent once, so what is signed is what
    arrives. Only for a final payment."""
    if not payment.is_final:
        raise InvalidTransition(payment.status, "redirect")
    parts = urlsplit(payment.return_url)
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    params.pop("signature", None)
    params.update(return_params(payment, now=now))
    params["signature"] = return_signature(payment.merchant.secret_key, params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", urlencode(params), parts.fragment))


def hosted_redirect(payment: Payment) -> str:
    """The address to send the customer to now. The first return is recorded in the payment's
    story; returning again (a reload, the back button, a second tab) adds nothing."""
    url = hosted_return_url(payment)
    _redirect_note_once(payment)
    return url


@transaction.atomic
def _redirect_note_once(payment: Payment) -> None:
    # Row lock: two tabs returning at the same moment record one redirect, not two.
    lock_payment(payment.pk)
    if payment.events.filter(kind=PaymentEvent.Kind.REDIRECT).exists():
        return
    parts = urlsplit(payment.return_url)
    payment_note(payment_id=payment.pk, kind=PaymentEvent.Kind.REDIRECT,
                 detail={"status": payment.status, "to": f"{parts.scheme}://{parts.netloc}{parts.path}"})
