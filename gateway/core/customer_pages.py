"""Errors on the pages a customer's browser opens (the hosted checkout, the sandbox's stand-ins
for banks): an HTML page in the checkout's look instead of the JSON envelope, which stays the
answer to every API client. A browser is told apart by its Accept header (text/html), so an
API client, a test client or curl keeps the envelope on the same addresses."""
from __future__ import annotations

from django.http import HttpResponse
from django.template.loader import render_to_string

from django.utils.translation import gettext_noop

from gateway.core.errors import GatewayError

CUSTOMER_PREFIXES = ("/checkout/", "/sandbox/")

# What the customer reads for each error code: a title and what to do. Nothing of any payment.
_PAGES = {
    "NOT_FOUND": (gettext_noop("This payment link does not work"),
                  gettext_noop("The link is incomplete, mistyped or no longer valid. Go back to the shop and start the "
                     "payment again; no money was taken.")),
    "RATE_LIMITED": (gettext_noop("Too many tries"),
                     gettext_noop("This connection opened too many payment links that do not work. Wait 15 minutes, then "
                        "open the link from the shop again.")),
    "VALIDATION_ERROR": (gettext_noop("This page has expired"),
                         gettext_noop("The page was open for too long. Go back, reload the page and try again.")),
    "METHOD_NOT_ALLOWED": (gettext_noop("This payment link does not work"),
                           gettext_noop("Go back to the shop and start the payment again; no money was taken.")),
}
_DEFAULT = (gettext_noop("Something went wrong"), gettext_noop("Nothing was charged. Go back and try again in a moment."))


def wants_html(request) -> bool:
    """A person's browser on a customer page (not an API client)."""
    return request.path.startswith(CUSTOMER_PREFIXES) and "text/html" in request.META.get("HTTP_ACCEPT", "")


def customer_error_page(request, error: GatewayError) -> HttpResponse | None:
    """The HTML page for `error` when a browser opened a customer page, else None (the caller
    answers with the envelope). Same status code and headers (Retry-After) as the envelope."""
    if not wants_html(request):
        return None
    from django.utils import translation

    title, advice = _PAGES.get(error.code, _DEFAULT)
    html = render_to_string("checkout/error.html", {
        "title": translation.gettext(title), "advice": translation.gettext(advice), "code": error.code,
    }, request=request)
    response = HttpResponse(html, status=error.http_status, content_type="text/html; charset=utf-8")
    for name, value in error.headers.items():
        response[name] = value
    response["Cache-Control"] = "no-cache, no-store"
    response.customer_page = True  # ApiErrorMiddleware leaves it as it is
    return response
