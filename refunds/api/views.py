"""The three refund endpoints (docs/refunds.md). Each view checks the request, then calls one
selector or service; the rules live in refunds.services."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from gateway.platform.api import GatewayAPIView
from gateway.platform.auth import ensure_same_merchant
from gateway.core.errors import NotFound, ValidationError
from gateway.platform.schema import IDEMPOTENCY_KEY, UNIX_SECONDS, bounded_integer, error_responses, text
from gateway.core.replay import checksum_use, request_digest
from gateway.core.signing import (
    REFUND_CREATE_CHECKSUM_NAMES,
    REFUND_CREATE_FULL_CHECKSUM_NAMES,
    REFUND_GET_CHECKSUM_NAMES,
    REFUND_LIST_CHECKSUM_NAMES,
    verify_signed_if_sent_or_required,
)
from payments.models import Payment
from payments.services.idempotency import HEADER as IDEMPOTENCY_HEADER
from payments.services.idempotency import idempotency_key_clean
from refunds import selectors, services
from refunds.api.serializers import (
    LIST_PAGE_MAX,
    LIST_PAGE_SIZE_MAX,
    RefundCreatedSerializer,
    RefundCreateSerializer,
    RefundGetQuerySerializer,
    RefundListQuerySerializer,
    RefundListSerializer,
    RefundResponseSerializer,
    is_refund_id,
)
from refunds.models import Refund
from refunds.payloads import refund_record


def _verify_signed(merchant, data: dict, *parts, names: tuple[str, ...]) -> None:
    """timestamp and checksum are optional (the interface's request has neither; the official
    SDK sends both) unless the merchant requires signed requests. When sent or required, both
    are verified: the timestamp, then the checksum over `parts` (named by `names`) and the
    timestamp."""
    verify_signed_if_sent_or_required(merchant, checksum=data.get("checksum"), timestamp=data.get("timestamp"),
                                      fields=parts, names=names)


def _merchant_code(request, named: str | None) -> str:
    """The merchant a request names: `merchantId` in its body or query, else the X-Merchant-Id
    header (SabPaisa's SDK 1.0.1 sends only the header; authentication has already matched it
    to the key). Either must be the key's merchant; with neither it is the missing merchantId."""
    code = named if named is not None else request.headers.get("X-Merchant-Id")
    if code is None:
        raise ValidationError("this field is required (or send the X-Merchant-Id header)", field="merchantId")
    ensure_same_merchant(request.user, code)
    return code


def _validated(serializer_class, data):
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class RefundsView(GatewayAPIView):
    """POST /api/v2/refunds creates a refund; GET /api/v2/refunds lists refunds, a payment's or the merchant's."""

    @extend_schema(
        operation_id="refund_create", summary="Create a refund", request=RefundCreateSerializer,
        parameters=[OpenApiParameter(IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY, OpenApiParameter.HEADER, required=False,
                                     description="retry safely: the same key and body replay the first answer")],
        responses={200: RefundCreatedSerializer, **error_responses(400, 401, 404, 409, 429)},
        description="REFUND_NOT_ALLOWED (payment not SUCCESS), REFUND_AMOUNT_EXCEEDED, IDEMPOTENCY_MISMATCH "
                    "(X-Idempotency-Key) and VALIDATION_ERROR are 400s; DUPLICATE_REFUND (refundId reused "
                    "with another body) is 409. merchantId may be left out when X-Merchant-Id is sent. "
                    "See docs/refunds.md.")
    def post(self, request):
        key = idempotency_key_clean(request.headers.get(IDEMPOTENCY_HEADER))
        data = _validated(RefundCreateSerializer, request.data)
        merchant = request.user
        code = _merchant_code(request, data.get("merchantId"))
        refund_id = data.get("refundId") or ""
        amount = "" if data["amount_paise"] is None else data["amount_paise"]
        # Signed over merchantId|txn|refundId|amount|timestamp (every field that moves money), or
        # over the SDK 3.0.0's merchantId|txn|refundId|timestamp, which leaves the amount out.
        signed_at = verify_signed_if_sent_or_required(
            merchant, checksum=data.get("checksum"), timestamp=data.get("timestamp"),
            fields=(code, data["txn_id"], refund_id), names=REFUND_CREATE_CHECKSUM_NAMES,
            full_fields=(code, data["txn_id"], refund_id, amount), full_names=REFUND_CREATE_FULL_CHECKSUM_NAMES)
        payment = selectors.payment_get_for_merchant(merchant=merchant, sabpaisa_txn_id=data["txn_id"])
        if signed_at is not None:
            # A signed refund is accepted once (gateway.core.replay): a second use of its checksum
            # is refused, but for the same request repeated with the refundId or X-Idempotency-Key
            # that answers it with the first refund. Without Redis, refused: it moves money.
            repeat = (request_digest(request.data) if refund_id
                      else request_digest(request.data, key) if key is not None else None)
            checksum_use(merchant_pk=merchant.pk, checksum=data["checksum"], timestamp=signed_at, repeat=repeat,
                         fail_closed=True)
        outcome = services.refund_request(
            merchant=merchant, payment=payment, amount=data["amount_paise"], reason=data["reason"],
            refund_id=data.get("refundId"), idempotency_key=key, body=request.data, api_key=request.auth)
        headers = {"Idempotent-Replayed": "true"} if outcome.replayed else None
        return Response(outcome.body, status=outcome.status, headers=headers)

    @extend_schema(
        operation_id="refund_list", summary="List refunds: of a transaction, or all the merchant's",
        parameters=[OpenApiParameter("merchantId", text(50), required=False,
                                     description="without it, the merchant is the X-Merchant-Id header"),
                    OpenApiParameter("sabpaisaTxnId", text(50), required=False,
                                     description="only this transaction's refunds (oldest first); transactionId "
                                                 "and txnId are aliases. Without it, every refund of the merchant, "
                                                 "newest first"),
                    OpenApiParameter("status", str, required=False, enum=list(Refund.Status.values)),
                    OpenApiParameter("fromDate", OpenApiTypes.DATE, required=False,
                                     description="created on or after this Asia/Kolkata day"),
                    OpenApiParameter("toDate", OpenApiTypes.DATE, required=False,
                                     description="created on or before this Asia/Kolkata day; not before fromDate"),
                    OpenApiParameter("page", bounded_integer(0, LIST_PAGE_MAX), required=False,
                                     description="from 0 (default 0)"),
                    OpenApiParameter("size", bounded_integer(1, LIST_PAGE_SIZE_MAX), required=False,
                                     description="1 to 100 (default 20)"),
                    OpenApiParameter("timestamp", UNIX_SECONDS, required=False),
                    OpenApiParameter("checksum", text(128), required=False,
                                     description="HMAC-SHA256 of merchantId|sabpaisaTxnId|timestamp (an absent "
                                                 "transaction written as an empty string), verified when sent; "
                                                 "required when the merchant requires signed requests")],
        responses={200: RefundListSerializer, **error_responses(400, 401, 404, 429)})
    def get(self, request):
        data = _validated(RefundListQuerySerializer, request.query_params.dict())
        merchant = request.user
        code = _merchant_code(request, data.get("merchantId"))
        _verify_signed(merchant, data, code, data["txn_id"] or "", names=REFUND_LIST_CHECKSUM_NAMES)
        payment = None
        if data["txn_id"] is not None:
            payment = selectors.payment_get_for_merchant(merchant=merchant, sabpaisa_txn_id=data["txn_id"])
        page, size = data["page"], data["size"]
        found = selectors.refunds_page_for_merchant(
            merchant=merchant, payment=payment, status=data.get("status"), from_day=data.get("fromDate"),
            to_day=data.get("toDate"), page=page, size=size)
        records = [refund_record(refund) for refund in found.refunds]
        body = {"success": True}
        if payment is not None:
            body.update({
                "sabpaisaTxnId": payment.sabpaisa_txn_id,
                "merchantTxnId": payment.merchant_txn_id,
                "paidAmountPaise": (selectors.payment_paid_amount(payment)
                                    if payment.status == Payment.Status.SUCCESS else 0),
                "refundedAmount": payment.refunded_amount,
                "refundPendingAmount": payment.refund_pending_amount,
                "refundableAmount": selectors.refundable_amount(payment),
            })
        body.update({
            "count": len(records),
            "refunds": records,
            # SabPaisa's page (issue 17): SDK 1.0.1 reads these.
            "items": records,
            "page": page,
            "size": size,
            "totalElements": found.total,
            "totalPages": -(-found.total // size),
        })
        return Response(body)


class RefundDetailView(GatewayAPIView):
    """GET /api/v2/refunds/{refundId}."""

    @extend_schema(
        operation_id="refund_get", summary="Get a refund",
        parameters=[OpenApiParameter("merchantId", text(50), required=False),
                    OpenApiParameter("timestamp", UNIX_SECONDS, required=False),
                    OpenApiParameter("checksum", text(128), required=False,
                                     description="HMAC-SHA256 of merchantId|refundId|timestamp, verified when sent; "
                                                 "required when the merchant requires signed requests")],
        responses={200: RefundResponseSerializer, **error_responses(400, 401, 404, 429)})
    def get(self, request, refundId: str):  # noqa: N803 - the interface's name for the path parameter
        refund_id = refundId
        data = _validated(RefundGetQuerySerializer, request.query_params.dict())
        merchant = request.user
        if data.get("merchantId") is not None:
            ensure_same_merchant(merchant, data["merchantId"])
        _verify_signed(merchant, data, data.get("merchantId") or merchant.code, refund_id,
                       names=REFUND_GET_CHECKSUM_NAMES)
        if not is_refund_id(refund_id):
            raise NotFound(f"no refund {refund_id}")
        refund = selectors.refund_get_for_merchant(merchant=merchant, refund_id=refund_id)
        return Response({"success": True, **refund_record(refund)})
