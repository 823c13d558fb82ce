"""Request-wide concerns: the traceId, the body-size limit and the envelope for errors that
never reach a DRF view (unknown paths, wrong methods on plain views, crashes)."""
import logging

from django.conf import settings

from gateway.errors import InternalError, MethodNotAllowed, NotFound, ValidationError, error_response
from gateway.tracing import new_trace_id, reset_trace_id, set_merchant, set_trace_id

logger = logging.getLogger("gateway.request")


class TraceIdMiddleware:
    """Give every request a traceId, expose it as X-Trace-Id and in every log line."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = set_trace_id(new_trace_id())
        set_merchant("")
        try:
            request.trace_id = token.var.get()
            response = self.get_response(request)
            response["X-Trace-Id"] = request.trace_id
            return response
        finally:
            reset_trace_id(token)


class ApiErrorMiddleware:
    """Refuse oversized bodies before anything reads them, and put 404/405/500 answers that
    Django itself produced into the envelope."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.API_MAX_BODY_BYTES:
            return error_response(ValidationError(
                f"request body is {length} bytes; the limit is {settings.API_MAX_BODY_BYTES}", field="body"))
        response = self.get_response(request)
        is_json = response.get("Content-Type", "").startswith("application/json")
        if response.status_code == 404 and not is_json:
            return error_response(NotFound())
        if response.status_code == 405 and not is_json:
            return error_response(MethodNotAllowed())
        return response

    def process_exception(self, request, exception):
        from gateway.errors import GatewayError

        if isinstance(exception, GatewayError):
            return error_response(exception)
        logger.exception("unhandled exception on %s %s", request.method, request.path)
        return error_response(InternalError())
