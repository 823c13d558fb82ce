"""The two settlement endpoints (docs/settlements.md, "Through the API"): what the acquirer paid
the merchant, and every event inside each payout. Read-only; authenticated and scoped like the
refund endpoints (the key's merchant; another merchant's settlement is NOT_FOUND)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from gateway.platform.api import GatewayAPIView, validated
from gateway.platform.auth import ensure_same_merchant
from gateway.core.signing import verify_signed_if_sent_or_required
from gateway.platform.schema import UNIX_SECONDS, bounded_integer, error_responses, text
from refunds import selectors
from refunds.api.settlement_serializers import (
    LINES_PAGE_SIZE_MAX,
    LIST_PAGE_SIZE_MAX,
    PAGE_MAX,
    SettlementDetailSerializer,
    SettlementGetQuerySerializer,
    SettlementListQuerySerializer,
    SettlementListSerializer,
    settlement_line_record,
    settlement_record,
)

MERCHANT_ID = OpenApiParameter("merchantId", text(50), required=False,
                               description="when sent, must be the key's merchant code")


# What a settlement read's checksum signs, then `timestamp` (docs/settlements.md).
LIST_CHECKSUM_NAMES = ("merchantId", "fromDate", "toDate")
GET_CHECKSUM_NAMES = ("merchantId", "settlementId")


def _checked(request, query_serializer, *signed, names: tuple[str, ...]) -> dict:
    """The query, validated; its merchantId (when sent) the key's; and its timestamp and
    checksum verified as on the refund reads: when either is sent, or always for a merchant
    that requires signed requests. `signed` are the values after merchantId, by name."""
    data = validated(query_serializer, request.query_params.dict())
    merchant = request.user
    code = data.get("merchantId")
    if code is not None:
        ensure_same_merchant(merchant, code)
    values = tuple(signed_value(data) for signed_value in signed)
    verify_signed_if_sent_or_required(merchant, checksum=data.get("checksum"), timestamp=data.get("timestamp"),
                                      fields=(code or merchant.code, *values), names=names)
    return data


def _day(name: str):
    return lambda data: data[name].isoformat() if data.get(name) else ""


def _signing_parameters(base: str) -> list[OpenApiParameter]:
    return [OpenApiParameter("timestamp", UNIX_SECONDS, required=False),
            OpenApiParameter("checksum", text(128), required=False,
                             description=f"HMAC-SHA256 of {base}|timestamp, verified when sent; required when "
                                         "the merchant requires signed requests")]


def _pages(total: int, size: int) -> int:
    return -(-total // size)


class SettlementsView(GatewayAPIView):
    """GET /api/v2/settlements: the merchant's settlements, a page at a time, newest first."""

    @extend_schema(
        operation_id="settlement_list", summary="List the merchant's settlements",
        parameters=[MERCHANT_ID,
                    OpenApiParameter("fromDate", OpenApiTypes.DATE, required=False,
                                     description="paid out on or after this Asia/Kolkata day"),
                    OpenApiParameter("toDate", OpenApiTypes.DATE, required=False,
                                     description="paid out on or before this Asia/Kolkata day; not before fromDate"),
                    OpenApiParameter("page", bounded_integer(0, PAGE_MAX), required=False,
                                     description="from 0 (default 0)"),
                    OpenApiParameter("size", bounded_integer(1, LIST_PAGE_SIZE_MAX), required=False,
                                     description="1 to 100 (default 20)"),
                    *_signing_parameters("merchantId|fromDate|toDate (an absent date written as an empty string)")],
        responses={200: SettlementListSerializer, **error_responses(400, 401, 429)},
        description="Amounts in paise. A settlement not yet paid out (no settledAt) is listed first and is "
                    "left out by a date filter. See docs/settlements.md.")
    def get(self, request):
        data = _checked(request, SettlementListQuerySerializer, _day("fromDate"), _day("toDate"),
                        names=LIST_CHECKSUM_NAMES)
        merchant = request.user
        page, size = data["page"], data["size"]
        found = selectors.settlements_page_for_merchant(merchant=merchant, from_day=data.get("fromDate"),
                                                        to_day=data.get("toDate"), page=page, size=size)
        records = [settlement_record(settlement) for settlement in found.settlements]
        return Response({
            "success": True,
            "count": len(records),
            "settlements": records,
            "items": records,
            "page": page,
            "size": size,
            "totalElements": found.total,
            "totalPages": _pages(found.total, size),
        })


class SettlementDetailView(GatewayAPIView):
    """GET /api/v2/settlements/{settlementId}: one settlement and a page of its lines."""

    @extend_schema(
        operation_id="settlement_get", summary="Get a settlement with its lines",
        parameters=[OpenApiParameter("settlementId", {"type": "string", "pattern": selectors.SETTLEMENT_ID_PATTERN.pattern},
                                     OpenApiParameter.PATH),
                    MERCHANT_ID,
                    OpenApiParameter("page", bounded_integer(0, PAGE_MAX), required=False,
                                     description="of the lines, from 0 (default 0)"),
                    OpenApiParameter("size", bounded_integer(1, LINES_PAGE_SIZE_MAX), required=False,
                                     description="lines per page, 1 to 1000 (default 500)"),
                    *_signing_parameters("merchantId|settlementId")],
        responses={200: SettlementDetailSerializer, **error_responses(400, 401, 404, 429)},
        description="totalElements and totalPages count the settlement's lines. See docs/settlements.md.")
    def get(self, request, settlementId: str):  # noqa: N803 - the API's name for the path parameter
        data = _checked(request, SettlementGetQuerySerializer, lambda _: settlementId, names=GET_CHECKSUM_NAMES)
        merchant = request.user
        settlement = selectors.settlement_get_for_merchant(merchant=merchant, public_id=settlementId)
        page, size = data["page"], data["size"]
        lines = selectors.settlement_lines_page(settlement=settlement, page=page, size=size)
        return Response({
            "success": True,
            **settlement_record(settlement),
            "lineCount": settlement.line_count,
            "lines": [settlement_line_record(line) for line in lines],
            "page": page,
            "size": size,
            "totalElements": settlement.line_count,
            "totalPages": _pages(settlement.line_count, size),
        })
