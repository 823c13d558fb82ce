"""POST /api/v2/payments/s2s: create an S2S UPI payment (docs/s2s.md)."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from gateway.platform.api import GatewayAPIView
from gateway.platform.auth import IsMerchant
from gateway.core.errors import S2SNotEnabled, ValidationError
from gateway.platform.schema import IDEMPOTENCY_KEY, error_responses, text
from payments.api.s2s_serializers import (
    S2SPaymentRequestSchema,
    S2SPaymentResponseSerializer,
    s2s_request_validate,
)
from payments.services.idempotency import HEADER as IDEMPOTENCY_HEADER
from payments.services.idempotency import idempotency_key_clean
from payments.services.s2s import s2s_payment_submit


class S2SEnabled(BasePermission):
    """S2S_NOT_ENABLED for a merchant without S2S, decided before the body is even parsed."""

    def has_permission(self, request, view):
        if not request.user.s2s_enabled:
            raise S2SNotEnabled()
        return True


class S2SPaymentCreateView(GatewayAPIView):
    # interface.md: S2S requires X-Merchant-Id besides X-Api-Key.
    require_merchant_header = True
    permission_classes = [IsMerchant, S2SEnabled]

    @extend_schema(
        operation_id="s2s_payment_create",
        request=S2SPaymentRequestSchema,
        parameters=[
            OpenApiParameter("X-Merchant-Id", text(50), OpenApiParameter.HEADER, required=True),
            OpenApiParameter(IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY, OpenApiParameter.HEADER, required=False,
                             description="Same key and body: the original response again. Kept 24 hours."),
        ],
        responses={201: S2SPaymentResponseSerializer, **error_responses(400, 401, 403, 429)},
        description="Create a UPI QR or intent payment. Amounts are integer paise.",
    )
    def post(self, request):
        merchant = request.user
        if request.content_type.split(";")[0].strip().lower() != "application/json":
            raise ValidationError("must be application/json", field="Content-Type")
        key = idempotency_key_clean(request.headers.get(IDEMPOTENCY_HEADER))
        body = request.data
        data = s2s_request_validate(body)
        outcome = s2s_payment_submit(merchant=merchant, data=data, body=body, idempotency_key=key)
        headers = {"Idempotent-Replayed": "true"} if outcome.replayed else None
        return Response(outcome.body, status=outcome.status, headers=headers)
