"""The dispute endpoints (docs/disputes.md): list, read, accept, send evidence. Each view checks
the request, then calls one selector or service (refunds.disputes)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from gateway.core.errors import ValidationError
from gateway.platform.api import GatewayAPIView
from gateway.platform.auth import ensure_same_merchant
from gateway.platform.schema import bounded_integer, error_responses, text
from refunds import selectors as refund_selectors
from refunds.api.dispute_serializers import (
    STATUS_WORDS,
    DisputeEvidenceRequestSerializer,
    DisputeGetQuerySerializer,
    DisputeListQuerySerializer,
    DisputeListSerializer,
    DisputeRecordSerializer,
)
from refunds.api.serializers import LIST_PAGE_MAX, LIST_PAGE_SIZE_MAX
from refunds.disputes import selectors, services
from refunds.disputes.payloads import dispute_record

MERCHANT_API = "merchant API"


def _validated(serializer_class, data):
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _merchant_checked(request, named: str | None) -> None:
    code = named if named is not None else request.headers.get("X-Merchant-Id")
    if code is not None:
        ensure_same_merchant(request.user, code)


class DisputesView(GatewayAPIView):
    """GET /api/v2/disputes: the merchant's disputes, newest first, a page at a time."""

    @extend_schema(
        operation_id="dispute_list", summary="List the merchant's disputes",
        parameters=[OpenApiParameter("merchantId", text(50), required=False),
                    OpenApiParameter("sabpaisaTxnId", text(50), required=False,
                                     description="only this transaction's disputes"),
                    OpenApiParameter("status", str, required=False, enum=STATUS_WORDS),
                    OpenApiParameter("fromDate", OpenApiTypes.DATE, required=False,
                                     description="received on or after this Asia/Kolkata day"),
                    OpenApiParameter("toDate", OpenApiTypes.DATE, required=False,
                                     description="received on or before this Asia/Kolkata day"),
                    OpenApiParameter("page", bounded_integer(0, LIST_PAGE_MAX), required=False),
                    OpenApiParameter("size", bounded_integer(1, LIST_PAGE_SIZE_MAX), required=False)],
        responses={200: DisputeListSerializer, **error_responses(400, 401, 404, 429)})
    def get(self, request):
        data = _validated(DisputeListQuerySerializer, request.query_params.dict())
        merchant = request.user
        _merchant_checked(request, data.get("merchantId"))
        payment = None
        if data.get("sabpaisaTxnId") is not None:
            payment = refund_selectors.payment_get_for_merchant(merchant=merchant,
                                                                sabpaisa_txn_id=data["sabpaisaTxnId"])
        page, size = data["page"], data["size"]
        found = selectors.disputes_page_for_merchant(
            merchant=merchant, status=data.get("status"), from_day=data.get("fromDate"), to_day=data.get("toDate"),
            payment=payment, page=page, size=size)
        records = [dispute_record(dispute) for dispute in found.disputes]
        return Response({"success": True, "count": len(records), "disputes": records, "items": records,
                         "page": page, "size": size, "totalElements": found.total,
                         "totalPages": -(-found.total // size)})


class DisputeDetailView(GatewayAPIView):
    """GET /api/v2/disputes/{disputeId}."""

    @extend_schema(operation_id="dispute_get", summary="Get a dispute",
                   parameters=[OpenApiParameter("merchantId", text(50), required=False)],
                   responses={200: DisputeRecordSerializer, **error_responses(400, 401, 404, 429)})
    def get(self, request, disputeId: str):  # noqa: N803 - the path parameter's API name
        data = _validated(DisputeGetQuerySerializer, request.query_params.dict())
        _merchant_checked(request, data.get("merchantId"))
        dispute = services.dispute_for_merchant_or_404(merchant=request.user, dispute_id=disputeId)
        return Response({"success": True, **dispute_record(dispute)})


class DisputeAcceptView(GatewayAPIView):
    """POST /api/v2/disputes/{disputeId}/accept: the merchant will not contest it."""

    @extend_schema(operation_id="dispute_accept", summary="Accept a dispute", request=None,
                   responses={200: DisputeRecordSerializer, **error_responses(400, 401, 404, 429)},
                   description="VALIDATION_ERROR naming `status` when the dispute is not awaiting an answer; "
                               "SERVICE_UNAVAILABLE when the processor did not answer (safe to repeat).")
    def post(self, request, disputeId: str):  # noqa: N803
        if request.data and set(request.data) - {"merchantId"}:
            raise ValidationError("accept takes no fields but merchantId", field=sorted(set(request.data))[0])
        _merchant_checked(request, request.data.get("merchantId") if request.data else None)
        dispute = services.dispute_for_merchant_or_404(merchant=request.user, dispute_id=disputeId)
        dispute = services.dispute_accept(dispute=dispute, actor=f"{MERCHANT_API} ({request.user.code})",
                                          actor_name=MERCHANT_API)
        return Response({"success": True, **dispute_record(dispute)})


class DisputeEvidenceView(GatewayAPIView):
    """POST /api/v2/disputes/{disputeId}/evidence (multipart/form-data): one document contesting it."""

    parser_classes = [MultiPartParser]

    def initial(self, request, *args, **kwargs):
        try:
            super().initial(request, *args, **kwargs)
        except UnsupportedMediaType:
            raise ValidationError("must be multipart/form-data: a file and its docType", field="Content-Type") from None

    @extend_schema(operation_id="dispute_evidence", summary="Contest a dispute with a document",
                   request={"multipart/form-data": DisputeEvidenceRequestSerializer},
                   responses={200: DisputeRecordSerializer, **error_responses(400, 401, 404, 429)},
                   description="file: PDF, PNG or JPEG judged by its content, at most DISPUTE_EVIDENCE_MAX_BYTES, "
                               "no active content; docType: one of the dispute's preferredEvidence types. "
                               "VALIDATION_ERROR names `file` or `docType` for a refused file. See docs/disputes.md.")
    def post(self, request, disputeId: str):  # noqa: N803
        fields = {key: request.data.get(key) for key in request.data if key != "file"}
        unknown = sorted(set(fields) - {"docType", "note", "merchantId"})
        if unknown:
            raise ValidationError("is not a field of an evidence upload", field=unknown[0])
        _merchant_checked(request, fields.get("merchantId"))
        upload = request.FILES.get("file")
        if upload is None or len(request.FILES.getlist("file")) != 1:
            raise ValidationError("is required: exactly one file", field="file")
        dispute = services.dispute_for_merchant_or_404(merchant=request.user, dispute_id=disputeId)
        dispute = services.dispute_evidence_send(
            dispute=dispute, doc_type=str(fields.get("docType") or ""), upload=upload,
            note=str(fields.get("note") or ""), actor=f"{MERCHANT_API} ({request.user.code})",
            actor_name=MERCHANT_API)
        return Response({"success": True, **dispute_record(dispute)})
