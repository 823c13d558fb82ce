"""The three refund endpoints (docs/refunds.md). Each view checks the request, then calls one
selector or service; the rules live in refunds.services."""
from __future__ import annotations

from rest_framework.response import Response

from gateway.api import GatewayAPIView
from gateway.auth import ensure_same_merchant
from gateway.errors import NotFound
from gateway.signing import verify_checksum, verify_timestamp
from payments.models import Payment
from payments.services.idempotency import HEADER as IDEMPOTENCY_HEADER
from payments.services.idempotency import idempotency_key_clean
from refunds import selectors, services
from refunds.api.serializers import (
    RefundCreateSerializer,
    RefundGetQuerySerializer,
    RefundListQuerySerializer,
    is_refund_id,
)
from refunds.payloads import refund_record


def _verify_signed(merchant, data: dict, *parts) -> None:
    """timestamp and checksum are optional (the interface's request has neither; the official
    SDK sends both). When either is sent, both are verified: the timestamp, then the checksum
    over `parts` and the timestamp."""
    if data.get("checksum") is None and data.get("timestamp") is None:
        return
    timestamp = verify_timestamp(data.get("timestamp"))
    verify_checksum(merchant.secret_key, data.get("checksum"), *parts, timestamp)


def _validated(serializer_class, data):
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class RefundsView(GatewayAPIView):
    """POST /api/v2/refunds creates a refund; GET /api/v2/refunds lists a payment's refunds."""

    def post(self, request):
        key = idempotency_key_clean(request.headers.get(IDEMPOTENCY_HEADER))
        data = _validated(RefundCreateSerializer, request.data)
        merchant = request.user
        ensure_same_merchant(merchant, data["merchantId"])
        _verify_signed(merchant, data, data["merchantId"], data["txn_id"], data.get("refundId") or "")
        payment = selectors.payment_get_for_merchant(merchant=merchant, sabpaisa_txn_id=data["txn_id"])
        outcome = services.refund_request(
            merchant=merchant, payment=payment, amount=data["amount_paise"], reason=data["reason"],
            refund_id=data.get("refundId"), idempotency_key=key, body=request.data)
        headers = {"Idempotent-Replayed": "true"} if outcome.replayed else None
        return Response(outcome.body, status=outcome.status, headers=headers)

    def get(self, request):
        data = _validated(RefundListQuerySerializer, request.query_params.dict())
        merchant = request.user
        ensure_same_merchant(merchant, data["merchantId"])
        payment = selectors.payment_get_for_merchant(merchant=merchant, sabpaisa_txn_id=data["txn_id"])
        refunds = selectors.refunds_for_payment(payment=payment)
        return Response({
            "success": True,
            "sabpaisaTxnId": payment.sabpaisa_txn_id,
            "merchantTxnId": payment.merchant_txn_id,
            "paidAmount": selectors.payment_paid_amount(payment) if payment.status == Payment.Status.SUCCESS else 0,
            "refundedAmount": selectors.refunded_amount(payment),
            "refundPendingAmount": selectors.refund_pending_amount(payment),
            "refundableAmount": selectors.refundable_amount(payment),
            "count": len(refunds),
            "refunds": [refund_record(refund) for refund in refunds],
        })


class RefundDetailView(GatewayAPIView):
    """GET /api/v2/refunds/{refundId}."""

    def get(self, request, refund_id: str):
        data = _validated(RefundGetQuerySerializer, request.query_params.dict())
        merchant = request.user
        if data.get("merchantId") is not None:
            ensure_same_merchant(merchant, data["merchantId"])
        _verify_signed(merchant, data, data.get("merchantId") or merchant.code, refund_id)
        if not is_refund_id(refund_id):
            raise NotFound(f"no refund {refund_id}")
        refund = selectors.refund_get_for_merchant(merchant=merchant, refund_id=refund_id)
        return Response({"success": True, **refund_record(refund)})
