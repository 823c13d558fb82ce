"""The token endpoints (beta, staging only; docs/tokens.md). Each view checks the request, then
calls one selector or service. Making a token starts from a payment, so POST /api/v2/tokens is
served by payments (payments.api.token_views), on TokenAPIView and the names below.

Order of checks: production (403 FEATURE_NOT_AVAILABLE for every request, before anything
else: the feature does not exist there), then the platform's (X-Merchant-Id present, X-Api-Key,
rate limit, body shape), then the body's fields, then the resources it names.
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from gateway.platform.api import GatewayAPIView
from gateway.platform.schema import error_responses, text
from tokens import selectors, services
from tokens.api.serializers import TokenDeletedSchema, TokenSchema
from tokens.payloads import token_body, token_deleted_body

TAGS = ["tokens", "beta"]
BETA = ("Beta, staging only: in production every token endpoint answers 403 FEATURE_NOT_AVAILABLE. The "
        "contract may change before general availability. ")
MERCHANT_HEADER = OpenApiParameter("X-Merchant-Id", text(50), OpenApiParameter.HEADER, required=True,
                                   description="the merchant code; must be the API key's merchant")
TOKEN_ID = OpenApiParameter("tokenId", str, OpenApiParameter.PATH, description="tok_...")


class TokenAPIView(GatewayAPIView):
    require_merchant_header = True

    def initial(self, request, *args, **kwargs):
        selectors.ensure_tokens_available()
        super().initial(request, *args, **kwargs)


class TokenDetailView(TokenAPIView):
    """GET and DELETE /api/v2/tokens/{tokenId}."""

    @extend_schema(
        operation_id="token_get", summary="Get a card token's metadata (beta)", tags=TAGS,
        parameters=[MERCHANT_HEADER, TOKEN_ID],
        responses={200: TokenSchema, **error_responses(401, 403, 404, 429)},
        description=BETA + "A deleted token, or another merchant's, is 404 NOT_FOUND.")
    def get(self, request, tokenId: str):  # noqa: N803 - the interface's name for the path parameter
        token = selectors.token_get_for_merchant(merchant=request.user, token_id=tokenId)
        return Response(token_body(token))

    @extend_schema(
        operation_id="token_delete", summary="Delete a card token (beta)", tags=TAGS,
        parameters=[MERCHANT_HEADER, TOKEN_ID],
        responses={200: TokenDeletedSchema, **error_responses(401, 403, 404, 429)},
        description=BETA + "Deletes the token for good: later GETs and DELETEs are 404 NOT_FOUND, and it can no "
                           "longer pay, not even in checkout sessions already created with it.")
    def delete(self, request, tokenId: str):  # noqa: N803
        merchant = request.user
        token = selectors.token_get_for_merchant(merchant=merchant, token_id=tokenId)
        token = services.token_delete(token=token, actor=None, actor_name=f"merchant {merchant.code} (API)")
        return Response(token_deleted_body(token))
