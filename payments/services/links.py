"""Payment links: a hosted payment that finance staff create in the console and send to a
customer (docs/console.md, docs/hosted-checkout.md).

A link is a hosted session like any other (hosted_payment_create) whose deadline is the link's
expiry (at most LINK_MAX_VALIDITY) and whose merchantTxnId is the link's id, `plink_...`: the
merchant finds it by enquiry, hears of it by the hosted webhook, refunds it and sees it in
settlement exactly as any hosted payment. The customer opens it at /pay/<token>
(payments.checkout.views.payment_link), which grants the browser the session as a valid
clientSecret does, and comes back to that same address at the end (its returnUrl), where the
link's outcome is shown. Cancelling is the PENDING -> FAILED transition, with its event and
the payment.failed webhook, and an audit record, in one transaction.
"""
from __future__ import annotations

import hashlib
import re
import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from gateway.core import crypto
from gateway.core.errors import NotFound, ValidationError
from gateway.core.ids import random_string
from gateway.platform.methods import GATEWAY_MAX_PAISE, GATEWAY_MIN_PAISE
from gateway.platform.models import Merchant
from gateway.platform.services import audit_record
from payments.models import Payment, PaymentLink
from payments.services.hosted.session import hosted_expire_if_due, hosted_payment_create
from payments.services.transitions import payment_cancel_unpaid
from payments.state import InvalidTransition

LINK_MAX_VALIDITY = timedelta(days=30)
LINK_MIN_VALIDITY = timedelta(minutes=15)
DESCRIPTION_MAX = 500
_PHONE = re.compile(r"[0-9]{10}")


def new_link_id() -> str:
    return "plink_" + random_string(string.ascii_letters + string.digits, 14)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def link_url(link: PaymentLink) -> str:
    """The address to send the customer: GATEWAY_PUBLIC_URL + /pay/<token>."""
    return settings.GATEWAY_PUBLIC_URL + reverse("checkout:payment-link", args=[crypto.decrypt(link.token_encrypted)])


@dataclass(frozen=True)
class LinkRequest:
    """What staff typed, before it is checked."""

    amount: int  # paise
    description: str
    customer_phone: str = ""
    customer_email: str = ""
    expires_at: datetime | None = None


def link_request_check(request: LinkRequest, now: datetime | None = None) -> LinkRequest:
    """`request` tidied (trimmed, email lower-cased, the default expiry of 7 days filled in).
    Raises ValidationError naming the field (amount, description, customer_phone,
    customer_email, expires_at)."""
    return _checked(request, now or timezone.now())


def _checked(request: LinkRequest, now: datetime) -> LinkRequest:
    if not GATEWAY_MIN_PAISE <= request.amount <= GATEWAY_MAX_PAISE:
        raise ValidationError(f"must be between {GATEWAY_MIN_PAISE} and {GATEWAY_MAX_PAISE} paise", field="amount")
    description = request.description.strip()
    if not description or len(description) > DESCRIPTION_MAX:
        raise ValidationError(f"must be 1 to {DESCRIPTION_MAX} characters: the customer sees what they pay for",
                              field="description")
    phone, email = request.customer_phone.strip(), request.customer_email.strip().lower()
    if not phone and not email:
        raise ValidationError("a link needs the customer's phone or email", field="customer_phone")
    if phone and not _PHONE.fullmatch(phone):
        raise ValidationError("must be exactly 10 digits", field="customer_phone")
    if email:
        try:
            validate_email(email)
        except DjangoValidationError:
            raise ValidationError("must be a valid email address", field="customer_email") from None
        if len(email) > 255:
            raise ValidationError("must be at most 255 characters", field="customer_email")
    expires_at = request.expires_at or now + timedelta(days=7)
    if expires_at > now + LINK_MAX_VALIDITY:
        raise ValidationError("must be at most 30 days ahead", field="expires_at")
    if expires_at < now + LINK_MIN_VALIDITY:
        raise ValidationError("must be at least 15 minutes ahead", field="expires_at")
    return LinkRequest(request.amount, description, phone, email, expires_at)


@transaction.atomic
def payment_link_create(*, merchant: Merchant, request: LinkRequest, actor) -> PaymentLink:
    """Create a link: its hosted payment (PENDING until `expires_at`), the link and the audit
    record, together or not at all. Raises ValidationError naming the field for an amount
    outside the bounds or that no method the merchant offers takes, a missing description,
    neither phone nor email, a malformed one, or an expiry not within 15 minutes to 30 days."""
    fields = _checked(request, timezone.now())
    link_id = new_link_id()
    token = secrets.token_urlsafe(24)
    session = hosted_payment_create(
        merchant=merchant, merchant_txn_id=link_id, amount=fields.amount, currency="INR",
        return_url=settings.GATEWAY_PUBLIC_URL + reverse("checkout:payment-link", args=[token]),
        customer_email=fields.customer_email, customer_phone=fields.customer_phone,
        description=fields.description, metadata={"paymentLink": link_id}, expires_at=fields.expires_at,
    )
    link = PaymentLink.objects.create(payment=session.payment, token_hash=token_hash(token),
                                      token_encrypted=crypto.encrypt(token),
                                      created_by=actor if getattr(actor, "pk", None) else None)
    audit_record(actor=actor, action="payment_link.create", obj=link, merchant=merchant,
                 after={"link": link_id, "sabpaisaTxnId": session.payment.sabpaisa_txn_id, "amount": fields.amount,
                        "customer_phone": fields.customer_phone, "customer_email": fields.customer_email,
                        "expires_at": fields.expires_at.isoformat()})
    return link


def payment_link_cancel(*, link: PaymentLink, actor) -> Payment:
    """Cancel an unpaid link: its payment PENDING -> FAILED ("payment link cancelled"), with
    the event, the payment.failed webhook and the audit record in one transaction. A link
    whose time is up expires instead. Raises InvalidTransition while the customer is paying
    it (a method in flight) and once it is final (paid, cancelled, expired)."""
    payment = hosted_expire_if_due(Payment.objects.select_related("merchant").get(pk=link.payment_id))
    if payment.is_final:
        raise InvalidTransition(payment.status, Payment.Status.FAILED)

    def audit(cancelled: Payment) -> None:
        audit_record(actor=actor, action="payment_link.cancel", obj=link, merchant=cancelled.merchant,
                     before={"status": Payment.Status.PENDING}, after={"status": cancelled.status})

    return payment_cancel_unpaid(payment_id=payment.pk, reason=PaymentLink.CANCELLED_REASON,
                                 detail={"reason": PaymentLink.CANCELLED_REASON,
                                         "by": getattr(actor, "get_username", lambda: "system")()},
                                 also=audit)


def payment_link_for_token(token: str) -> PaymentLink:
    """The link whose address carries `token` (found by its hash), with its payment and
    merchant. Raises NotFound."""
    if not token or len(token) > 100:
        raise NotFound()
    link = (PaymentLink.objects.select_related("payment__merchant")
            .filter(token_hash=token_hash(token)).first())
    if link is None:
        raise NotFound()
    return link
