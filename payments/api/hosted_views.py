"""The hosted-checkout API: create a session, and the two enquiry forms. One view per path;
each validates, checks signatures through gateway.core.signing, then calls one service."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from gateway.platform.api import GatewayAPIView, validated
from gateway.platform.auth import ensure_same_merchant
from gateway.core.crypto import constant_time_equals
from gateway.core.errors import InvalidSignature, NotFound, ValidationError
from gateway.platform.schema import CHECKSUM, IDEMPOTENCY_KEY, UNIX_SECONDS, error_responses, text
from gateway.core.replay import checksum_use, request_digest
from gateway.core.signing import (
    CREATION_CHECKSUM_NAMES,
    ENQUIRY_CHECKSUM_NAMES,
    HOSTED_FULL_CHECKSUM_NAMES,
    verify_checksum,
    verify_checksum_of_any,
    verify_signed_if_sent_or_required,
    verify_timestamp,
)
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
from payments.api.order_serializers import order_details_validate
from payments.models import Payment
from payments.selectors import NOT_FOUND_MESSAGE, payment_get_for_enquiry
from payments.services.enquiry import enquiry_body_form, enquiry_transaction
from payments.services.hosted.creation import hosted_payment_submit
from payments.services.idempotency import HEADER as IDEMPOTENCY_HEADER
from payments.services.idempotency import idempotency_key_clean
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


class HostedPaymentsView(GatewayAPIView):
    """POST: create a checkout session. GET: enquiry by merchantId and merchantTxnId."""

    @extend_schema(
        operation_id="hosted_payment_create", request=HostedPaymentRequestSchema,
        responses={200: HostedSessionResponseSchema, **error_responses(400, 401, 403, 429)},
        parameters=[OpenApiParameter("X-Merchant-Id", text(50), OpenApiParameter.HEADER, required=False,
                                     description="Optional; must be the API key's merchant when sent."),
                    OpenApiParameter(IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY, OpenApiParameter.HEADER, required=False,
                                     description="Same key and body: the original response again (as S2S). "
                                                 "Kept 24 hours.")],
        description="Open a hosted checkout session (docs/hosted-checkout.md). Amounts are integer paise.",
    )
    def post(self, request):
        merchant = request.user
        # The key's form first, as on S2S: a bad header is refused whatever the body says.
        key = idempotency_key_clean(request.headers.get(IDEMPOTENCY_HEADER))
        data = _json_object(request)
        _ensure_claimed_merchant(request, data, "merchantId")
        fields = validated(HostedPaymentCreateSerializer, data)
        order_details = order_details_validate(data)
        ensure_same_merchant(merchant, fields["merchantId"])
        timestamp = verify_timestamp(data.get("timestamp"))
        # The full base string also signs returnUrl (where the customer and the signed result go)
        # and tokenId (a saved card to charge; "" when not sent); the interface's leaves them out,
        # so its checksum is used once (first_use below).
        signed = (fields["merchantId"], fields["merchantTxnId"], fields["amount"], fields["currency"])
        verify_checksum_of_any(merchant.secret_key, fields["checksum"],
                               (*signed, fields["returnUrl"], fields.get("tokenId") or "", timestamp),
                               (*signed, timestamp), names=CREATION_CHECKSUM_NAMES,
                               full_names=HOSTED_FULL_CHECKSUM_NAMES)

        def first_use() -> None:
            # Where the session would be created, after the key and merchantTxnId have answered
            # their own repeats (gateway.core.replay; without Redis it goes on).
            checksum_use(merchant_pk=merchant.pk, checksum=fields["checksum"], timestamp=timestamp,
                         repeat=request_digest(data), fail_closed=False)
        token = None
        if fields.get("tokenId") is not None:
            # The tokenisation beta (docs/tokens.md): the merchant's own live token, in staging only.
            token = token_get_usable(merchant=merchant, token_id=fields["tokenId"])
        create = dict(
            merchant_txn_id=fields["merchantTxnId"], amount=fields["amount"], currency=fields["currency"],
            return_url=fields["returnUrl"], customer_name=fields.get("customerName", ""),
            customer_email=fields.get("customerEmail", ""), customer_phone=fields.get("customerPhone", ""),
            description=fields.get("description", ""), metadata=fields["metadata"], udf=fields["udf"],
            order_details=order_details, language=fields.get("language", ""),
        )
        outcome = hosted_payment_submit(merchant=merchant, create=create, body=data, token=token,
                                        idempotency_key=key, first_use=first_use)
        headers = {"Idempotent-Replayed": "true"} if outcome.replayed else None
        return Response(outcome.body, status=outcome.status, headers=headers)

    @extend_schema(
        operation_id="payment_enquiry", responses={200: TransactionSchema, **error_responses(400, 401, 404, 429)},
        parameters=[OpenApiParameter("merchantId", text(50), required=True),
                    OpenApiParameter("merchantTxnId", text(100), required=True),
                    OpenApiParameter("spTxnId", text(100), required=False,
                                     description="the payment's sabpaisaTxnId; another's is NOT_FOUND"),
                    OpenApiParameter("timestamp", UNIX_SECONDS, required=False),
                    OpenApiParameter("checksum", CHECKSUM, required=False,
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
                                          fields=(fields["merchantId"], fields["merchantTxnId"], 0, "INR"),
                                          names=ENQUIRY_CHECKSUM_NAMES)
        found = _enquiry_find(request.user, fields)
        return Response(enquiry_transaction(found))


class PaymentEnquiryView(GatewayAPIView):
    """POST /api/v2/payments/enquiry: {clientCode or merchantId (else X-Merchant-Id),
    merchantTxnId, spTxnId?}, optionally signed with checksum + timestamp over
    merchantId|merchantTxnId|0|INR|timestamp or over the payment's real amount and currency."""

    @extend_schema(
        operation_id="payment_enquiry_body", request=EnquiryBodyRequestSchema,
        responses={200: EnquiryBodyResponseSchema, **error_responses(400, 401, 404, 429)},
        description="Enquiry, body form: clientCode or merchantId (with neither, X-Merchant-Id); checksum and "
                    "timestamp verified when present (merchantId|merchantTxnId|0|INR|timestamp, or with the "
                    "payment's real amount and currency).",
    )
    def post(self, request):
        data = _json_object(request)
        _ensure_claimed_merchant(request, data, "clientCode", "merchantId")
        header_code = request.headers.get("X-Merchant-Id")
        if header_code is not None and "clientCode" not in data and "merchantId" not in data:
            # SDK 1.0.1 names the merchant only in the header (authentication matched it to the key).
            data = {**data, "clientCode": header_code}
        fields = validated(EnquiryBodySerializer, data)
        ensure_same_merchant(request.user, fields["merchant_code"])
        found = None
        if "checksum" in data or "timestamp" in data or request.user.signed_requests_required:
            found = _enquiry_checksum_verify(request.user, fields, verify_timestamp(data.get("timestamp")))
        found = found or _enquiry_find(request.user, fields)
        return Response(enquiry_body_form(found))


def _enquiry_find(merchant, fields: dict) -> Payment:
    """The merchant's payment with that merchantTxnId. An spTxnId naming another payment (or
    none) is NOT_FOUND with the message of an absent one: the two ids must name one payment."""
    found = payment_get_for_enquiry(merchant=merchant, merchant_txn_id=fields["merchantTxnId"])
    sp_txn_id = fields.get("spTxnId")
    if sp_txn_id is not None and not constant_time_equals(sp_txn_id, found.sabpaisa_txn_id):
        raise NotFound(NOT_FOUND_MESSAGE)
    return found


def _enquiry_checksum_verify(merchant, fields: dict, timestamp: int) -> Payment | None:
    """Accept a checksum over merchantId|merchantTxnId|0|INR|timestamp (the SDK 3.0.0's) or over
    the payment's real amount and currency (what some merchant code signs, issue 17). The
    first needs no lookup; the second needs the payment, which is returned. Raises
    InvalidSignature when neither matches, or when there is no payment to match (never
    NOT_FOUND: a request that fails its signature learns nothing about the payment)."""
    code, txn, given = fields["merchant_code"], fields["merchantTxnId"], fields.get("checksum")
    names = (*ENQUIRY_CHECKSUM_NAMES, "timestamp")
    try:
        verify_checksum(merchant.secret_key, given, code, txn, 0, "INR", timestamp, names=names)
        return None
    except InvalidSignature as failed:
        # Either way the message teaches the SDK's form, over this request's own values: the
        # payment's real amount must not reach a request that failed its signature.
        try:
            found = _enquiry_find(merchant, fields)
        except NotFound:
            raise InvalidSignature(failed.message) from None
        try:
            verify_checksum(merchant.secret_key, given, code, txn, found.amount, found.currency, timestamp)
        except InvalidSignature:
            raise InvalidSignature(failed.message) from None
    return found
