"""The one error tree and the one envelope.

Views and services just raise a GatewayError; DRF's exception handler (API views) and
ApiErrorMiddleware (everything else: 404, 405, 500) turn it into
``{"success": false, "errorCode", "errorMessage", "traceId", "error": {"code", "message"}}``.

`error` repeats errorCode and errorMessage (issue 17): the official SDK 3.0.0 shows a merchant
only `error.message`, and 1.0.1 and merchant code written from SabPaisa's docs read
`error.code`; CONTRACT.md's four fields stay as they were.
"""
from __future__ import annotations

import logging

from django.core.exceptions import DisallowedHost, PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, JsonResponse
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

from gateway.core.tracing import current_trace_id

logger = logging.getLogger("gateway.errors")


class GatewayError(Exception):
    code = "PROCESSING_ERROR"
    http_status = 400
    default_message = "The request could not be processed."

    def __init__(self, message: str | None = None, *, field: str | None = None, headers=None):
        self.message = message or self.default_message
        self.field = field
        self.headers = headers or {}
        super().__init__(self.message)


def _error(code: str, status: int, message: str) -> type[GatewayError]:
    return type(code.title().replace("_", "") + "Error", (GatewayError,),
                {"code": code, "http_status": status, "default_message": message})


Unauthorized = _error("UNAUTHORIZED", 401, "Invalid API key or merchant code.")
S2SNotEnabled = _error("S2S_NOT_ENABLED", 403, "S2S payments are not enabled for this merchant.")
FeatureNotAvailable = _error("FEATURE_NOT_AVAILABLE", 403, "This feature is not available in this environment.")
NotFound = _error("NOT_FOUND", 404, "The requested resource does not exist.")
MethodNotAllowed = _error("METHOD_NOT_ALLOWED", 405, "This method is not allowed on this path.")
RateLimited = _error("RATE_LIMITED", 429, "Too many requests; retry after the time in Retry-After.")
InvalidTimestamp = _error("INVALID_TIMESTAMP", 400, "timestamp is missing or in the future.")
RequestExpired = _error("REQUEST_EXPIRED", 400, "timestamp is older than 5 minutes.")
InvalidSignature = _error("INVALID_SIGNATURE", 400, "checksum verification failed.")
InvalidPaymentMode = _error("INVALID_PAYMENT_MODE", 400, "paymentMode must be UPI_QR or UPI_INTENT.")
DuplicateTransaction = _error("DUPLICATE_TRANSACTION", 400, "merchantTxnId has already been used.")
IdempotencyMismatch = _error("IDEMPOTENCY_MISMATCH", 400,
                             "X-Idempotency-Key was already used with a different request body.")
PaymentFailed = _error("PAYMENT_FAILED", 400, "The bank system could not start the payment.")
ServiceUnavailable = _error("SERVICE_UNAVAILABLE", 400, "The service is temporarily unavailable; retry later.")
ProcessingError = _error("PROCESSING_ERROR", 400, "The payment could not be processed.")
RefundNotAllowed = _error("REFUND_NOT_ALLOWED", 400, "This payment cannot be refunded.")
RefundAmountExceeded = _error("REFUND_AMOUNT_EXCEEDED", 400,
                              "The refund would exceed the amount paid less earlier refunds.")
# SabPaisa's code for a merchant refundId reused with another body (issue 17). 409: its docs give
# no status for it, and a conflict with an existing resource is what 409 means (docs/refunds.md).
DuplicateRefund = _error("DUPLICATE_REFUND", 409, "refundId has already been used with a different request.")
InternalError = _error("INTERNAL_ERROR", 500, "An unexpected error occurred; quote the traceId to support.")


class ValidationError(GatewayError):
    """A field is missing or violates its constraint. The message always names the field."""

    code = "VALIDATION_ERROR"
    http_status = 400
    default_message = "The request is invalid."

    def __init__(self, message: str | None = None, *, field: str | None = None, headers=None):
        if field and message and not message.startswith(field):
            message = f"{field}: {message}"
        super().__init__(message, field=field, headers=headers)


def envelope_body(code: str, message: str) -> dict:
    """The one error body, for every error path (the DRF handler, the middleware, /healthz)."""
    return {"success": False, "errorCode": code, "errorMessage": message, "traceId": current_trace_id(),
            "error": {"code": code, "message": message}}


def envelope(code: str, message: str, status: int, headers=None) -> JsonResponse:
    response = JsonResponse(envelope_body(code, message), status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def error_response(exc: GatewayError) -> JsonResponse:
    return envelope(exc.code, exc.message, exc.http_status, exc.headers)


def _first_drf_detail(detail, path: str = "") -> tuple[str, str]:
    """Walk DRF's nested error detail to the first (field path, message)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = path if key == "non_field_errors" else (f"{path}.{key}" if path else str(key))
            return _first_drf_detail(value, name)
    if isinstance(detail, list) and detail:
        return _first_drf_detail(detail[0], path)
    return path, str(detail)


def bad_request_error(exc: Exception | None) -> GatewayError:
    """What a request Django itself refused as malformed (SuspiciousOperation) answers."""
    if isinstance(exc, DisallowedHost):
        return ValidationError("this host name is not served here", field="Host")
    if isinstance(exc, RequestDataTooBig):
        return ValidationError("the request body is too large", field="body")
    return ValidationError("the request is malformed", field="request")


def to_gateway_error(exc: Exception) -> GatewayError | None:
    """Map Django/DRF exceptions onto our codes; None means "unexpected"."""
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, drf_exceptions.ValidationError):
        field, message = _first_drf_detail(exc.detail)
        return ValidationError(message, field=field or None)
    if isinstance(exc, drf_exceptions.ParseError):
        return ValidationError("the request body is not valid JSON", field="body")
    if isinstance(exc, drf_exceptions.UnsupportedMediaType):
        return ValidationError("Content-Type must be application/json", field="Content-Type")
    if isinstance(exc, (drf_exceptions.NotAuthenticated, drf_exceptions.AuthenticationFailed)):
        return Unauthorized()
    if isinstance(exc, drf_exceptions.Throttled):
        wait = max(1, int(exc.wait or 1))
        return RateLimited(headers={"Retry-After": str(wait)})
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return MethodNotAllowed()
    if isinstance(exc, (drf_exceptions.NotFound, Http404)):
        return NotFound()
    if isinstance(exc, (drf_exceptions.PermissionDenied, PermissionDenied)):
        return Unauthorized()
    if isinstance(exc, drf_exceptions.NotAcceptable):
        return ValidationError("only application/json responses are available", field="Accept")
    if isinstance(exc, SuspiciousOperation):
        return bad_request_error(exc)
    return None


def exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER: every API error leaves through here."""
    error = to_gateway_error(exc)
    if error is None:
        logger.exception("unexpected error in %s", context.get("view").__class__.__name__)
        error = InternalError()
    # As DRF's own handler does: an error never commits a request's atomic block. (Imported
    # here: rest_framework.views imports the authentication classes, which import this module.)
    from rest_framework.views import set_rollback

    set_rollback()
    response = Response(
        envelope_body(error.code, error.message),
        status=error.http_status,
        headers=error.headers,
    )
    return response
