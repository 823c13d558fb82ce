"""Where the customer goes next: the page for the payment's state (methods while PENDING, the
method's own page while PROCESSING, our result page once final, which then sends the customer
on to the merchant's returnUrl)."""
from __future__ import annotations

from django.conf import settings
from django.http import HttpResponseRedirect
from django.urls import reverse

from payments.models import Payment
from payments.services import hosted

S = Payment.Status
M = Payment.Mode


def step_url(payment: Payment) -> str:
    """The page for a payment that is not final."""
    pid = payment.payment_id
    if payment.status == S.PENDING:
        return reverse("checkout:page", args=[pid])
    if hosted.acquirer_page_open(payment):
        # Out on the acquirer's page (or back from it, being confirmed): the waiting page.
        return reverse("checkout:status", args=[pid])
    if payment.payment_mode == M.CARD:
        return reverse("checkout:card-otp", args=[pid])
    if payment.payment_mode in hosted.TRANSFER_MODES:
        return reverse("checkout:transfer", args=[pid])
    if payment.payment_mode in hosted.BANK_MODES and not settings.IS_PRODUCTION:
        return reverse("checkout:sandbox-bank", args=[pid])
    return reverse("checkout:status", args=[pid])


def go_on(payment: Payment, *, here: str | None = None):
    """None when the customer is on the right page (`here`), else the redirect to the page for
    the payment's state: the result page once final. 303, so a POST is followed by a GET."""
    payment.refresh_from_db()
    payment = hosted.hosted_expire_if_due(payment)
    url = reverse("checkout:result", args=[payment.payment_id]) if payment.is_final else step_url(payment)
    if here is not None and url == here:
        return None
    return HttpResponseRedirect(url, status=303)
