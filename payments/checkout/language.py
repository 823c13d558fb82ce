"""The checkout's language: Hindi or English, chosen per request.

In order: the customer's own choice on the page (Django's set_language view keeps it in the
LANGUAGE_COOKIE_NAME cookie, so it sticks for the browser's session and beyond), then the
`language` the merchant sent when creating the payment (read only for a browser that holds
the payment's grant: the page language must not tell a prober anything), then English. A
regional form (hi-IN, en-GB) counts as its language; anything unknown is English.
"""
from __future__ import annotations

from django.conf import settings

from payments.checkout.grants import has_grant
from payments.models import Payment

SUPPORTED = tuple(code for code, _ in settings.LANGUAGES)
DEFAULT = "en"


def normalise(value: str | None) -> str | None:
    """'hi', 'HI', 'hi-IN', 'hi_IN' -> 'hi'; anything not supported -> None."""
    primary = (value or "").strip().lower().replace("_", "-").split("-")[0]
    return primary if primary in SUPPORTED else None


def checkout_language(request, payment_id: str | None = None) -> str:
    chosen = normalise(request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME))
    if chosen:
        return chosen
    if payment_id:
        if has_grant(request, payment_id):
            sent = Payment.objects.filter(payment_id=payment_id).values_list("language", flat=True).first()
            return normalise(sent) or DEFAULT
    return DEFAULT
