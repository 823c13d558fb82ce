"""OpenAPI pieces shared by every API view: the X-Api-Key scheme and the error envelope.

Views document their errors with `extend_schema(responses={200: ..., **error_responses(400, 401, 429)})`.
"""
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from gateway.core.fields import HEX64, NO_CONTROL_PATTERN


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "gateway.platform.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "X-Api-Key",
            "description": "The merchant's API key. S2S and token endpoints also need X-Merchant-Id "
                           "(the merchant code).",
        }


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="the same as errorCode")
    message = serializers.CharField(help_text="the same as errorMessage")


class ErrorEnvelopeSerializer(serializers.Serializer):
    success = serializers.BooleanField(default=False)
    errorCode = serializers.CharField(help_text="e.g. VALIDATION_ERROR, UNAUTHORIZED, RATE_LIMITED")
    errorMessage = serializers.CharField(help_text="for a VALIDATION_ERROR, starts with the field's name")
    traceId = serializers.CharField(help_text="also in the X-Trace-Id header; quote it to support")
    error = ErrorDetailSerializer(help_text="errorCode and errorMessage again, as SabPaisa's clients read them")


_DESCRIPTIONS = {
    400: "VALIDATION_ERROR or another 400 code of the interface",
    401: "UNAUTHORIZED: missing or wrong X-Api-Key, or X-Merchant-Id / merchantId not the key's merchant",
    403: "S2S_NOT_ENABLED or FEATURE_NOT_AVAILABLE",
    404: "NOT_FOUND (also for another merchant's resource)",
    409: "DUPLICATE_REFUND: a refundId reused with a different request",
    429: "RATE_LIMITED; see Retry-After",
}


def error_responses(*statuses: int) -> dict:
    return {status: OpenApiResponse(ErrorEnvelopeSerializer, description=_DESCRIPTIONS.get(status, ""))
            for status in statuses}


# Parameter schemas that say what the views enforce (issue 29: the document must state it, and
# tests/fuzz checks that a request it allows is never refused with VALIDATION_ERROR).

def text(max_length: int, *, pattern: str = NO_CONTROL_PATTERN) -> dict:
    """A non-empty string of at most `max_length` characters without control characters."""
    return {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": pattern}


CHECKSUM = {"type": "string", "pattern": HEX64.pattern, "description": "64 hex characters"}
UNIX_SECONDS = {"type": "integer", "format": "int64"}
# X-Idempotency-Key (payments.services.idempotency.idempotency_key_clean): 1 to 255 visible ASCII.
IDEMPOTENCY_KEY = {"type": "string", "pattern": r"^[\x21-\x7e]{1,255}$"}


def bounded_integer(low: int, high: int) -> dict:
    return {"type": "integer", "minimum": low, "maximum": high}


def request_bodies_closed(result, generator, request, public):
    """drf-spectacular post-processing hook: every request body object lists all the fields the
    service reads, and says so (`additionalProperties: false`). The service ignores a field it
    does not know, but refuses any body carrying a NUL character, a key's included, so a
    document open to unknown keys would allow requests the service refuses; a client generated
    from it has no reason to send a field nothing reads."""
    # Every body the API takes is required: without one the service answers VALIDATION_ERROR.
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                operation["requestBody"]["required"] = True
    schemas = result.get("components", {}).get("schemas", {})
    for name, component in schemas.items():
        if name.endswith("Request") and component.get("type") == "object" and "properties" in component:
            component.setdefault("additionalProperties", False)
    # A refund names its payment by one of three names (refunds.api.serializers): at least one.
    refund = schemas.get("RefundCreateRequest")
    if refund is not None:
        refund["anyOf"] = [{"required": [name]} for name in ("sabpaisaTxnId", "transactionId", "txnId")]
    return result
