"""What the checkout asks of the customer beyond the method: the mobile number an acquirer
requires (Acquirer.requires_customer_phone: Cashfree's create order takes no order without
one) when the merchant's session came without a usable one (`customerPhone` is optional)."""
from __future__ import annotations

import re

from django.db import transaction

from gateway.core.errors import ValidationError
from payments.acquirer import acquirer_for, acquirer_named
from payments.locks import lock_payment
from payments.services.routing import merchant_acquirers
from payments.lookups import mobile_digits
from payments.models import Payment, PaymentEvent
from payments.services.transitions import payment_note
from payments.state import InvalidTransition

S = Payment.Status

# An Indian mobile number: ten digits, the first 6 to 9.
_INDIAN_MOBILE = re.compile(r"[6-9][0-9]{9}")


def indian_mobile(raw: str) -> str:
    """`raw` read as mobile_digits, when that is an Indian mobile number (ten digits, the
    first 6 to 9); else empty."""
    number = mobile_digits(raw)
    return number if _INDIAN_MOBILE.fullmatch(number) else ""


def customer_phone_needed(payment: Payment) -> bool:
    """Whether the checkout must ask the customer for a mobile number before a method starts:
    the acquirer requires one and the payment has none it can send."""
    if mobile_digits(payment.customer_phone):
        return False
    if payment.acquirer:
        return acquirer_for(payment).requires_customer_phone
    # Not routed yet: any acquirer its routes may send it to.
    return any(acquirer_named(name).requires_customer_phone for name in merchant_acquirers(payment.merchant_id))


@transaction.atomic(durable=True)
def hosted_customer_phone_set(*, payment_id: int, phone: str) -> Payment:
    """Keep the mobile number the customer typed on the checkout (`phone`, read by
    indian_mobile) as the payment's
    customer_phone, with a note in its story (the number's last two digits only). A payment
    that already has a usable number keeps it: the merchant's word stands over a form's.
    Not a status change. Raises ValidationError (field customer_phone) for a number that is
    not an Indian mobile, InvalidTransition when the payment is no longer PENDING."""
    number = indian_mobile(phone)
    if not number:
        raise ValidationError("enter a 10-digit Indian mobile number", field="customer_phone")
    # Row lock: the customer's first method start (another tab) or the expiry may be moving the
    # payment on; the number is written only while it is still PENDING, so an attempt already
    # under way is never given a number it was not started with.
    payment = lock_payment(payment_id)
    if payment.status != S.PENDING:
        raise InvalidTransition(payment.status, S.PROCESSING)
    if mobile_digits(payment.customer_phone):
        return payment
    payment.customer_phone = number
    payment.save(update_fields=["customer_phone", "updated_at"])
    payment_note(payment_id=payment.pk, kind=PaymentEvent.Kind.NOTE,
                 detail={"customer_phone": "given on the checkout", "ending": number[-2:]})
    return payment
