"""Payment links: a hosted payment that finance staff create in the console and send to a
customer (docs/console.md, docs/hosted-checkout.md).

A link is a hosted session like any other (hosted_payment_create) whose deadline is the link's
expiry (at most LINK_MAX_VALIDITY) and whose merchantTxnId is the link's id, `plink_...`: the
merchant finds it by enquiry, hears of it by the hosted webhook, refunds it and sees it in
settlement exactly as any hosted payment. The customer opens it at /pay/<token>
(payments.checkout.views.payment_link), which grants the browser the session as a valid
clientSecret does, and comes back at the end to /pay/<link id> (its returnUrl), where the
link's outcome is shown to the browser that holds the session. The token is a secret: only its
hash finds the link, it is kept encrypted for finance to copy the address again, and it is never
in the payment's returnUrl (which support reads on the payment's page) nor in the audit log.
Cancelling is the PENDING -> FAILED transition, with its event and the payment.failed webhook,
and an audit record, in one transaction: by finance in the console (payment_link_cancel), or by
the customer on the checkout (payment_link_customer_cancel, recorded as the customer's).
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
from gateway.core.errors import FeatureNotAvailable, NotFound, ValidationError
from gateway.core.ids import random_string
from gateway.platform.methods import GATEWAY_MAX_PAISE, GATEWAY_MIN_PAISE
from gateway.platform.models import Merchant
from gateway.platform.services import audit_record
from payments.models import Payment, PaymentLink
from payments.services.hosted.session import hosted_expire_if_due, hosted_payment_create
from payments.services.transitions import payment_cancel_unpaid
from payments.state import InvalidTransition

# A link is valid for 1 to 30 days, as the console offers it (docs/decisions.md, payment links): it
# travels by SMS, WhatsApp or email, and a shorter one would often be dead when it is opened.
LINK_MAX_VALIDITY = timedelta(days=30)
LINK_MIN_VALIDITY = timedelta(days=1)
# The console computes "now + N days" a moment before this check runs: that moment is not a shortfall.
LINK_VALIDITY_SLACK = timedelta(minutes=1)
DESCRIPTION_MAX = 500
_PHONE = re.compile(r"[0-9]{10}")


def new_link_id() -> str:
    return "plink_" + random_string(string.ascii_letters + string.digits, 14)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


LINK_ID = re.compile(r"plink_[A-Za-z0-9]{14}")


def link_return_url(link_id: str) -> str:
    """Where the checkout sends the customer at the end: the link's id, not its token."""
    return settings.GATEWAY_PUBLIC_URL + reverse("checkout:payment-link", args=[link_id])


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
    if expires_at < now + LINK_MIN_VALIDITY - LINK_VALIDITY_SLACK:
        raise ValidationError("must be at least 1 day ahead", field="expires_at")
    return LinkRequest(request.amount, description, phone, email, expires_at)


@transaction.atomic
def payment_link_create(*, merchant: Merchant, request: LinkRequest, actor) -> PaymentLink:
    """Create a link: its hosted payment (PENDING until `expires_at`), the link and the audit
    record, together or not at all. Raises ValidationError naming the field for an amount
    outside the bounds or that no method the merchant offers takes, a missing description,
    neither phone nor email, a malformed one, or an expiry not within 1 to 30 days."""
    fields = _checked(request, timezone.now())
    link_id = new_link_id()
    token = secrets.token_urlsafe(24)
    session = hosted_payment_create(
        merchant=merchant, merchant_txn_id=link_id, amount=fields.amount, currency="INR",
        return_url=link_return_url(link_id),
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


CUSTOMER_CANCELLED_REASON = "cancelled by the customer"


def payment_link_of(payment: Payment) -> PaymentLink | None:
    return PaymentLink.objects.filter(payment_id=payment.pk).first()


def payment_link_customer_cancel(*, link: PaymentLink, viewer, address: str) -> Payment:
    """The customer gives up on a link's payment on the checkout: PENDING -> FAILED ("cancelled
    by the customer", the link's state *failed*, not *cancelled*), with its event, webhook and a
    payment_link.customer_cancel audit record naming the customer (and the address) as who did it,
    in one transaction. A browser signed in to the console as staff without the permission to
    cancel links is refused (FEATURE_NOT_AVAILABLE): staff who may not cancel cannot do it through
    the customer's page; staff who may are recorded by name. Raises InvalidTransition once a
    method is in flight or the payment is final."""
    from gateway.platform.roles import CANCEL_PAYMENT_LINK

    staff = viewer if getattr(viewer, "is_authenticated", False) and getattr(viewer, "is_staff", False) else None
    if staff is not None and not staff.has_perm(CANCEL_PAYMENT_LINK):
        raise FeatureNotAvailable("You are signed in to the console without the permission to cancel payment "
                                  "links, so this page will not cancel it for you.")
    payment = hosted_expire_if_due(Payment.objects.select_related("merchant").get(pk=link.payment_id))
    if payment.status != Payment.Status.PENDING:
        raise InvalidTransition(payment.status, Payment.Status.FAILED)
    by = "customer" if staff is None else staff.get_username()

    def audit(cancelled: Payment) -> None:
        audit_record(actor=staff or "customer", action="payment_link.customer_cancel", obj=link,
                     merchant=cancelled.merchant, before={"status": Payment.Status.PENDING},
                     after={"status": cancelled.status, "by": by, "address": address,
                            "page": "customer checkout"})

    return payment_cancel_unpaid(payment_id=payment.pk, reason=CUSTOMER_CANCELLED_REASON,
                                 detail={"reason": CUSTOMER_CANCELLED_REASON, "by": by}, also=audit)


def payment_link_for_id(link_id: str) -> PaymentLink:
    """The link whose id (its payment's merchantTxnId) is `link_id`. Raises NotFound. The id is
    not a secret: a caller must check the browser already holds the payment."""
    if not LINK_ID.fullmatch(link_id or ""):
        raise NotFound()
    link = (PaymentLink.objects.select_related("payment__merchant")
            .filter(payment__merchant_txn_id=link_id, payment__flow=Payment.Flow.HOSTED).first())
    if link is None:
        raise NotFound()
    return link


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
