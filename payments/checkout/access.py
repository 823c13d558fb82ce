"""Who may see a checkout page, and the decorator every checkout and sandbox page wears. (The
sandbox pages, under /sandbox/, are 404 in production: gateway.platform.middleware.SandboxGateMiddleware.)

The customer arrives with ?clientSecret=...; a valid secret grants this browser's session
access to that one payment and the customer is sent on to the same address without the
secret (out of the address bar and of later Referer headers). Every other page needs the grant.

Only failures are limited. A valid secret always opens its own payment, whatever others behind
the same address (a NAT, an office, a carrier, a proxy) have tried, and a browser holding the
grant is never limited. A wrong secret, or a page without the grant, answers NOT_FOUND and
counts against two counters: the client address (gateway.core.clientip: REMOTE_ADDR, or
X-Forwarded-For behind TRUSTED_PROXY_COUNT proxies) and the payment named in the address. Once
either is over its limit, failures answer RATE_LIMITED instead, until the window passes.

The counters live in the cache (Redis). When it cannot be reached they are skipped and the
outage logged: the limiter fails open, since a 256-bit secret cannot be guessed anyway and a
customer must not get a 500 because a counter could not be read.
"""
from __future__ import annotations

import logging
from functools import wraps

from django.core.cache import cache
from django.utils import translation
from django.views.decorators.cache import never_cache

from gateway.core.clientip import client_ip
from gateway.core.customer_pages import customer_error_page
from gateway.core.errors import GatewayError, NotFound, RateLimited
from gateway.platform.ratelimit import window_hit
from payments.checkout.grants import grant, has_grant
from payments.checkout.language import checkout_language
from payments.models import Payment
from payments.selectors import payment_get_for_checkout, payment_get_hosted

logger = logging.getLogger("payments.checkout")

# Wrong or missing clientSecrets tolerated in a window, per client address and per payment.
# Secrets are 256-bit, so this is about probing, not about guessing one.
BAD_SECRET_LIMIT = 20
BAD_SECRET_WINDOW_SECONDS = 900

def checkout_page(view):
    """Every checkout and sandbox page: never cached, and in the customer's language
    (payments.checkout.language), its error pages included. (The CSP header comes with every
    HTML page, gateway.platform.middleware.PagePolicyMiddleware. A GatewayError a view raises becomes,
    for a browser, an HTML page in the checkout's look, and for anything else the JSON
    envelope: gateway.core.customer_pages, gateway.platform.middleware.ApiErrorMiddleware.)"""

    @wraps(view)
    def in_language(request, *args, **kwargs):
        language = checkout_language(request, kwargs.get("payment_id"))
        with translation.override(language):
            try:
                response = view(request, *args, **kwargs)
            except GatewayError as exc:
                response = customer_error_page(request, exc)
                if response is None:
                    raise
        response.headers.setdefault("Content-Language", language)
        return response

    return never_cache(in_language)


def _failure_keys(request, payment_id: str) -> tuple[str, str]:
    return (f"checkout:badsecret:{client_ip(request)}",
            # A payment id comes from the address and may be anything: bounded before it is a key.
            f"checkout:badsecret:pay:{payment_id[:64]}")


def _refuse_failure(request, payment_id: str) -> None:
    """A failed look at `payment_id`: RATE_LIMITED if its address or payment is already over the
    limit, else counted against both and NOT_FOUND. Fails open (NOT_FOUND, logged) when the
    cache cannot be reached."""
    keys = _failure_keys(request, payment_id)
    try:
        counts = cache.get_many(keys)
        limited = any((counts.get(key) or 0) >= BAD_SECRET_LIMIT for key in keys)
        if not limited:
            for key in keys:
                window_hit(key, BAD_SECRET_WINDOW_SECONDS)
    except Exception:
        logger.exception("checkout link limit not applied: the cache is unreachable")
        limited = False
    if limited:
        raise RateLimited("too many invalid checkout links; try again later",
                          headers={"Retry-After": str(BAD_SECRET_WINDOW_SECONDS)})
    raise NotFound()


def granted_payment(request, payment_id: str) -> Payment:
    """The payment this browser was given access to. The grant is checked first: a customer who
    has access is never limited, however much others behind the same address probe. Without it:
    NOT_FOUND, counted; RATE_LIMITED once the address or the payment is over the limit."""
    if has_grant(request, payment_id):
        return payment_get_hosted(payment_id=payment_id)
    _refuse_failure(request, payment_id)


def grant_by_secret(request, payment_id: str, client_secret: str) -> None:
    """Give this browser access to the payment if `client_secret` is its session secret (or it
    has access already). A valid secret is never limited: the secret is looked at first, so that
    probing from the customer's address, or at the customer's payment, cannot lock the customer
    out. A wrong one: NOT_FOUND, counted; RATE_LIMITED once the address or the payment is over
    the limit. (Telling a right secret from a wrong one teaches a prober nothing: a right one
    is 256 random bits it would have to have already.)"""
    if has_grant(request, payment_id):
        return  # the customer opened the merchant's link again
    payment = payment_get_for_checkout(payment_id=payment_id, client_secret=client_secret)
    if payment is None:
        _refuse_failure(request, payment_id)
    grant(request, payment.payment_id)


def grant_by_link(request, token: str):
    """The payment link whose address carries `token`, with this browser given access to its
    payment (payments.services.links), as a valid clientSecret gives it. Like a clientSecret, a
    valid token is looked at first and never limited; an unknown one is NOT_FOUND, counted
    against the address (and the token), RATE_LIMITED once over the limit."""
    from payments.services.links import LINK_ID, payment_link_for_id, payment_link_for_token

    if LINK_ID.fullmatch(token):
        # The link's returnUrl names the link by its id, not its token (which stays out of the
        # payment's row): only the browser that already holds the payment may see its outcome.
        try:
            link = payment_link_for_id(token)
        except NotFound:
            link = None
        if link is None or not has_grant(request, link.payment.payment_id):
            _refuse_failure(request, f"link:{token}")
        return link
    try:
        link = payment_link_for_token(token)
    except NotFound:
        _refuse_failure(request, f"link:{token}")
    grant(request, link.payment.payment_id)
    return link
