"""The hosted-checkout API: create a session, and the two enquiry forms. One view per path;
each validates, checks signatures through gateway.signing, then calls one service."""
from __future__ import annotations

from datetime import timezone as dt_timezone

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from gateway.api import GatewayAPIView, validated
from gateway.auth import ensure_same_merchant
from gateway.errors import ValidationError
from gateway.schema import error_responses
from gateway.signing import verify_checksum, verify_signed_if_sent_or_required, verify_timestamp
from payments.api.hosted_serializers import (
    EnquiryBodyRequestSchema,
    EnquiryBodyResponseSchema,
    EnquiryBodySerializer,
    EnquiryQuerySerializer,
    HostedPaymentCreateSerializer,
    HostedPaymentRequestSchema,
    HostedSessionResponseSchema,
    TransactionSchema,
)
from payments.selectors import payment_get_for_enquiry
from payments.services.enquiry import enquiry_body_form, enquiry_transaction
from payments.services.hosted import hosted_payment_create
from tokens.selectors import token_get_usable


def _json_object(request) -> dict:
    if not isinstance(request.data, dict):
        raise ValidationError("the request body must be a JSON object", field="body")
    return request.data


def _ensure_claimed_merchant(request, data: dict, *names: str) -> None:
    """Authorisation before validation: a merchant code in the body or query that names
    another merchant than the API key's is UNAUTHORIZED, whatever else is wrong. A missing or
    malformed one is left to the serializer (VALIDATION_ERROR)."""
    for name in names:
        if isinstance(data.get(name), str):
            ensure_same_merchant(request.user, data[name])


def _iso_utc(value) -> str:
    return value.astimezone(dt_timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


class HostedPaymentsView(GatewayAPIView):
    """POST: create a checkout session. GET: enquiry by merchantId and merchantTxnId."""

    @extend_schema(
        operation_id="hosted_payment_create", request=HostedPaymentRequestSchema,
        responses={200: HostedSessionResponseSchema, **error_responses(400, 401, 403, 429)},
        parameters=[OpenApiParameter("X-Merchant-Id", str, OpenApiParameter.HEADER, required=False,
                                     description="Optional; must be the API key's merchant when sent.")],
        description="Open a hosted checkout session (docs/hosted-checkout.md). Amounts are integer paise.",
    )
    def post(self, request):
        merchant = request.user
        data = _json_object(request)
        _ensure_claimed_merchant(request, data, "merchantId")
        fields = validated(HostedPaymentCreateSerializer, data)
        ensure_same_merchant(merchant, fields["merchantId"])
        timestamp = verify_timestamp(data.get("timestamp"))
        verify_checksum(merchant.secret_key, fields["checksum"], fields["merchantId"], fields["merchantTxnId"],
                        fields["amount"], fields["currency"], timestamp)
        token = None
        if fields.get("tokenId") is not None:
            # The tokenisation beta (docs/tokens.md): the merchant's own live token, in staging only.
            token = token_get_usable(merchant=merchant, token_id=fields["tokenId"])
        session = hosted_payment_create(
            merchant=merchant, merchant_txn_id=fields["merchantTxnId"], amount=fields["amount"],
            currency=fields["currency"], return_url=fields["returnUrl"],
            customer_name=fields.get("customerName", ""), customer_email=fields.get("customerEmail", ""),
            customer_phone=fields.get("customerPhone", ""), description=fields.get("description", ""),
            metadata=fields["metadata"], udf=fields["udf"], token=token,
        )
        payment = session.payment
        return Response({
            "status": payment.status,
            "sabpaisaTxnId": payment.sabpaisa_txn_id,
            "paymentId": payment.payment_id,
            "checkoutUrl": session.checkout_url,
            "clientSecret": session.client_secret,
            "expiresAt": _iso_utc(payment.expires_at),
        })

    @extend_schema(
        operation_id="payment_enquiry", responses={200: TransactionSchema, **error_responses(400, 401, 404, 429)},
        parameters=[OpenApiParameter("merchantId", str, required=True),
                    OpenApiParameter("merchantTxnId", str, required=True),
                    OpenApiParameter("timestamp", int, required=False),
                    OpenApiParameter("checksum", str, required=False,
                                     description="HMAC-SHA256 of merchantId|merchantTxnId|0|INR|timestamp, verified "
                                                 "when sent; required when the merchant requires signed requests")],
        description="Enquiry by merchantTxnId, payments of both flows. amount is paise, paidAmount rupees.",
    )
    def get(self, request):
        query = request.query_params.dict()
        _ensure_claimed_merchant(request, query, "merchantId")
        fields = validated(EnquiryQuerySerializer, query)
        ensure_same_merchant(request.user, fields["merchantId"])
        verify_signed_if_sent_or_required(request.user, checksum=fields.get("checksum"),
                                          timestamp=query.get("timestamp"),
                                          fields=(fields["merchantId"], fields["merchantTxnId"], 0, "INR"))
        found = payment_get_for_enquiry(merchant=request.user, merchant_txn_id=fields["merchantTxnId"])
        return Response(enquiry_transaction(found.payment, refunded=found.refunded_amount,
                                            refund_pending=found.refund_pending_amount))


class PaymentEnquiryView(GatewayAPIView):
    """POST /api/v2/payments/enquiry: {clientCode or merchantId, merchantTxnId}, optionally
    signed with checksum + timestamp over merchantId|merchantTxnId|0|INR|timestamp."""

    @extend_schema(
        operation_id="payment_enquiry_body", request=EnquiryBodyRequestSchema,
        responses={200: EnquiryBodyResponseSchema, **error_responses(400, 401, 404, 429)},
        description="Enquiry, body form: clientCode or merchantId; checksum and timestamp verified when "
                    "present (merchantId|merchantTxnId|0|INR|timestamp).",
    )
    def post(self, request):
        data = _json_object(request)
        _ensure_claimed_merchant(request, data, "clientCode", "merchantId")
        fields = validated(EnquiryBodySerializer, data)
        ensure_same_merchant(request.user, fields["merchant_code"])
        if "checksum" in data or "timestamp" in data or request.user.signed_requests_required:
            timestamp = verify_timestamp(data.get("timestamp"))
            verify_checksum(request.user.secret_key, fields.get("checksum"), fields["merchant_code"],
                            fields["merchantTxnId"], 0, "INR", timestamp)
        found = payment_get_for_enquiry(merchant=request.user, merchant_txn_id=fields["merchantTxnId"])
        return Response(enquiry_body_form(found.payment, refunded=found.refunded_amount,
                                          refund_pending=found.refund_pending_amount))
