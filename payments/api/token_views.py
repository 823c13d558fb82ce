"""POST /api/v2/tokens (beta, staging only; docs/tokens.md): save the card of a payment as a
token. Served by payments because it starts from a payment (payments.services.card_tokens);
the token's own endpoints, read and delete, are the tokens app's (tokens.api.views)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from gateway.platform.schema import error_responses
from payments.services.card_tokens import payment_token_create
from tokens.api.serializers import TokenCreatedSchema, TokenCreateSerializer
from tokens.api.views import BETA, MERCHANT_HEADER, TAGS, TokenAPIView
from tokens.payloads import token_created_body


class TokensView(TokenAPIView):
    """POST /api/v2/tokens."""

    @extend_schema(
        operation_id="token_create", summary="Create a card token (beta)", tags=TAGS,
        request=TokenCreateSerializer, parameters=[MERCHANT_HEADER],
        responses={200: TokenCreatedSchema, **error_responses(400, 401, 403, 404, 429)},
        description=BETA + "Makes the network token of a SUCCESS card payment of this merchant during which the "
                           "customer ticked 'save this card' on the checkout and passed 3-D Secure. One token per "
                           "payment: asking again returns the same token (header Idempotent-Replayed: true). "
                           "Another merchant's payment is 404 NOT_FOUND. See docs/tokens.md.")
    def post(self, request):
        serializer = TokenCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        consent = data["consent"]
        outcome = payment_token_create(
            merchant=request.user, payment_id=data["paymentId"], consent_given=consent["consentGiven"],
            consent_timestamp=consent["consentTimestamp"], consent_text=consent["consentText"])
        headers = None if outcome.created else {"Idempotent-Replayed": "true"}
        return Response(token_created_body(outcome.token), headers=headers)
