"""Request-wide concerns: the traceId, the body-size limit and the envelope for errors that
never reach a DRF view (unknown paths, wrong methods on plain views, crashes)."""
import logging
import re

from csp.middleware import CSPMiddleware
from django.conf import settings
from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation
from django.http import Http404
from django.utils.log import log_response

from gateway.core.clientip import warn_if_proxy_unconfigured
from gateway.core.errors import GatewayError, InternalError, MethodNotAllowed, NotFound, ValidationError, error_response
from gateway.core.tracing import new_trace_id, reset_merchant, reset_trace_id, set_merchant, set_trace_id
from gateway.core.customer_pages import customer_error_page
from gateway.platform.views import console_too_large, is_console

logger = logging.getLogger("gateway.request")

# Raised by views for Django to answer (handler400/403/404, which give the envelope, plus the
# django.security log for suspicious requests); not crashes.
_DJANGO_ANSWERS = (Http404, PermissionDenied, SuspiciousOperation, BadRequest)


class TraceIdMiddleware:
    """Give every request a traceId, expose it as X-Trace-Id and in every log line. (And, once
    per process, warn of a proxy in front that TRUSTED_PROXY_COUNT does not know: gateway.core.clientip.)"""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = set_trace_id(new_trace_id())
        merchant_token = set_merchant("")
        try:
            request.trace_id = token.var.get()
            warn_if_proxy_unconfigured(request)
            response = self.get_response(request)
            response["X-Trace-Id"] = request.trace_id
            # Django logs 5xx answers after the last middleware has returned, where the line
            # would lose its traceId; log it here instead (log_response marks it as done).
            if response.status_code >= 400:
                log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
            return response
        finally:
            reset_merchant(merchant_token)
            reset_trace_id(token)


# A refused body is read and thrown away up to this much before the answer, so that the client
# (or the balancer in front) reads the 400 instead of a reset. gunicorn closes the connection
# after every answer; closing a socket with unread data makes the kernel send RST, which can
# overtake the answer: HAProxy then logged the request as aborted by the server and answered
# 502. Larger bodies are not read (that would let anyone keep a worker busy): the balancer
# refuses those before they reach a node (deploy/haproxy/haproxy.cfg).
DISCARD_MAX_BYTES = 1024 * 1024
# The two paths that take a dispute's evidence file (refunds' API, the console's dispute page).
_EVIDENCE_UPLOAD = re.compile(r"^/(api/v2/disputes/[^/]+/evidence|admin/console/disputes/[^/]+/evidence)$")
EVIDENCE_FORM_ROOM = 64 * 1024


def _discard_body(request, length: int | None) -> None:
    """Read and drop the body of a refused request, `length` bytes (Content-Length), or for a
    chunked one whatever gunicorn's reader decodes, at most DISCARD_MAX_BYTES either way."""
    stream = request.META.get("wsgi.input")
    if stream is None:
        return
    if length is None:
        if "gunicorn.socket" not in request.META:
            return  # another server's stream may not say where a chunked body ends
        left = DISCARD_MAX_BYTES
    elif length > DISCARD_MAX_BYTES:
        return
    else:
        left = length
    try:
        while left > 0:
            chunk = stream.read(min(65536, left))
            if not chunk:
                return
            left -= len(chunk)
    except (OSError, ValueError):  # the client went away, or sent a malformed chunk
        return


class ApiErrorMiddleware:
    """Refuse oversized bodies before anything reads them (the API's limit, or the console's
    own with an HTML page), and put 404/405/500 answers that
    Django itself produced into the envelope."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if _EVIDENCE_UPLOAD.search(request.path):
            # A dispute's evidence file (docs/disputes.md), through the API or the console: its
            # own limit, the file's plus room for the form's other fields.
            if length > settings.DISPUTE_EVIDENCE_MAX_BYTES + EVIDENCE_FORM_ROOM:
                _discard_body(request, length)
                return error_response(ValidationError(
                    f"is {length} bytes; the limit is {settings.DISPUTE_EVIDENCE_MAX_BYTES}", field="file"))
        elif is_console(request):
            # A person uploading a logo reads a page, not an envelope; and the console's forms
            # have a limit of their own (a 512 KB logo), not the API's 64 KiB.
            if length > settings.CONSOLE_MAX_BODY_BYTES:
                _discard_body(request, length)
                return console_too_large(request, length)
        elif length > settings.API_MAX_BODY_BYTES:
            _discard_body(request, length)
            return error_response(ValidationError(
                f"request body is {length} bytes; the limit is {settings.API_MAX_BODY_BYTES}", field="body"))
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower() and not length:
            # Django reads a body only up to Content-Length: a chunked body would be read as empty
            # and the request refused for missing fields, which misleads the caller.
            _discard_body(request, None)
            return error_response(ValidationError(
                "is required; chunked request bodies are not accepted", field="Content-Length"))
        response = self.get_response(request)
        is_json = response.get("Content-Type", "").startswith("application/json")
        if getattr(response, "customer_page", False):
            return response  # a customer's browser got its HTML error page (gateway.core.customer_pages)
        if response.status_code == 404 and not is_json and not is_console(request):
            # (The console's 404 is its own HTML page, from gateway.platform.views.not_found.)
            return customer_error_page(request, NotFound()) or error_response(NotFound())
        if response.status_code == 405 and not is_json:
            page = customer_error_page(request, MethodNotAllowed())
            if page is not None:
                return page
            allow = response.get("Allow")
            response = error_response(MethodNotAllowed())
            if allow:
                response["Allow"] = allow
        return response

    def process_exception(self, request, exception):
        if isinstance(exception, GatewayError):
            return customer_error_page(request, exception) or error_response(exception)
        if isinstance(exception, _DJANGO_ANSWERS):
            return None
        logger.exception("unhandled exception on %s %s", request.method, request.path)
        return error_response(InternalError())


class SandboxGateMiddleware:
    """CONTRACT.md: every /sandbox/ path answers 404 in production. Decided here, ahead of the
    CSRF check, so that a POST there gets the same NOT_FOUND as a GET and no sandbox view can
    forget its own check."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if settings.IS_PRODUCTION and (request.path == "/sandbox" or request.path.startswith("/sandbox/")):
            return error_response(NotFound())
        return self.get_response(request)


class NulCharacterMiddleware:
    """PostgreSQL text cannot hold NUL, so an id or parameter carrying one would reach the
    database as an error (a 500). Refuse it here: no resource has NUL in its path (404), and a
    query parameter with one is a VALIDATION_ERROR naming it. JSON bodies are checked by
    gateway.core.parsers.GatewayJSONParser."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path:
            return error_response(NotFound())
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                return error_response(ValidationError("must not contain NUL characters",
                                                      field=name.replace("\x00", "") or "query"))
        return self.get_response(request)


class PagePolicyMiddleware(CSPMiddleware):
    """The Content-Security-Policy (settings.CONTENT_SECURITY_POLICY) on every HTML page: the
    checkout, the sandbox pages, the console and the API docs page. JSON answers carry none
    (nothing renders them). The console's templates and the docs page use inline styles, so
    there styles may be inline; scripts never are, anywhere, and the console's forms post only
    to the console itself."""

    def process_response(self, request, response):
        if not response.get("Content-Type", "").startswith("text/html"):
            return response
        if is_console(request) or request.path.startswith("/api/docs/"):
            replace = {"style-src": ["'self'", "'unsafe-inline'"]}
            if is_console(request):
                replace["form-action"] = ["'self'"]
            response._csp_replace = {**replace, **(getattr(response, "_csp_replace", None) or {})}
        return super().process_response(request, response)
