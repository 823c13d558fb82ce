"""OpenAPI pieces shared by every API view: the X-Api-Key scheme and the error envelope.

Views document their errors with `extend_schema(responses={200: ..., **error_responses(400, 401, 429)})`.
"""
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


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
