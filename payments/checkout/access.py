"""Who may see a checkout page, and the decorator every checkout and sandbox page wears. (The
sandbox pages, under /sandbox/, are 404 in production: gateway.middleware.SandboxGateMiddleware.)

The customer arrives with ?clientSecret=...; a valid secret grants this browser's session
access to that one payment and the customer is sent on to the same address without the
secret (out of the address bar and of later Referer headers). Every other page needs the grant.
A browser holding the grant is never rate limited. Without it, a wrong secret or a page answers
NOT_FOUND and counts against the client address (gateway.clientip: REMOTE_ADDR, or
X-Forwarded-For behind TRUSTED_PROXY_COUNT proxies); too many in a window answer RATE_LIMITED.
"""
from __future__ import annotations

from functools import wraps

from csp.middleware import CSPMiddleware
from django.core.cache import cache
from django.utils import translation
from django.utils.decorators import decorator_from_middleware
from django.views.decorators.cache import never_cache

from gateway.cache import counter_hit
from gateway.clientip import client_ip
from gateway.customer_pages import customer_error_page
from gateway.errors import GatewayError, NotFound, RateLimited
from payments.models import Payment
from payments.selectors import payment_get_for_checkout, payment_get_hosted

SESSION_GRANTS = "checkout_grants"
MAX_GRANTS = 20
# Wrong or missing clientSecrets tolerated per client address in a window. Secrets are 256-bit,
# so this is about probing, not about guessing one.
BAD_SECRET_LIMIT = 20
BAD_SECRET_WINDOW_SECONDS = 900

checkout_csp = decorator_from_middleware(CSPMiddleware)


def checkout_page(view):
    """Every checkout and sandbox page: the CSP header, never cached, and in the customer's
    language (payments.checkout.language), its error pages included. (A GatewayError a view
    raises becomes, for a browser, an HTML page in the checkout's look, and for anything else
    the JSON envelope: gateway.customer_pages, gateway.middleware.ApiErrorMiddleware.)"""

    @wraps(view)
    def in_language(request, *args, **kwargs):
        from payments.checkout.language import checkout_language

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

    return checkout_csp(never_cache(in_language))


def _bad_secret_key(request) -> str:
    return f"checkout:badsecret:{client_ip(request)}"


def _ensure_not_limited(request) -> None:
    if (cache.get(_bad_secret_key(request)) or 0) >= BAD_SECRET_LIMIT:
        raise RateLimited("too many invalid checkout links from this address; try again later",
                          headers={"Retry-After": str(BAD_SECRET_WINDOW_SECONDS)})


def _count_bad_secret(request) -> None:
    counter_hit(cache, _bad_secret_key(request), BAD_SECRET_WINDOW_SECONDS)


def _grant(request, payment: Payment) -> None:
    grants = [pid for pid in request.session.get(SESSION_GRANTS, []) if pid != payment.payment_id]
    request.session[SESSION_GRANTS] = (grants + [payment.payment_id])[-MAX_GRANTS:]


def _has_grant(request, payment_id: str) -> bool:
    return payment_id in request.session.get(SESSION_GRANTS, [])


def granted_payment(request, payment_id: str) -> Payment:
    """The payment this browser was given access to. The grant is checked first: a customer who
    has access is never limited, however much others behind the same address (a NAT, an office,
    a carrier) probe. Without it: RATE_LIMITED once the address is over the limit, else
    NOT_FOUND (counted)."""
    if _has_grant(request, payment_id):
        return payment_get_hosted(payment_id=payment_id)
    _ensure_not_limited(request)
    _count_bad_secret(request)
    raise NotFound()


def grant_by_secret(request, payment_id: str, client_secret: str) -> None:
    """Give this browser access to the payment if `client_secret` is its session secret (or it
    has access already). Raises RATE_LIMITED when the address is over the limit, checked before
    the secret is looked at, so that a limited address learns nothing from the answer (a right
    secret must not be told from a wrong one); NOT_FOUND for a wrong secret (counted)."""
    if _has_grant(request, payment_id):
        return  # the customer opened the merchant's link again
    _ensure_not_limited(request)
    payment = payment_get_for_checkout(payment_id=payment_id, client_secret=client_secret)
    if payment is None:
        _count_bad_secret(request)
        raise NotFound()
    _grant(request, payment)


def grant_by_link(request, token: str):
    """The payment link whose address carries `token`, with this browser given access to its
    payment (payments.services.links), as a valid clientSecret gives it. Limited and counted
    like a wrong clientSecret: RATE_LIMITED when the address is over the limit (checked first),
    NOT_FOUND for an unknown token."""
    from payments.services.links import payment_link_for_token

    _ensure_not_limited(request)
    try:
        link = payment_link_for_token(token)
    except NotFound:
        _count_bad_secret(request)
        raise
    _grant(request, link.payment)
    return link
