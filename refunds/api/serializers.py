"""Request shapes of the refund endpoints, interface names and the official SDK's aliases.

Strict JSON types: a number where a string belongs, or a string, float or boolean where paise
belong, is a VALIDATION_ERROR naming the field, never silently converted. `timestamp` and
`checksum` are only checked for shape here: gateway.signing decides INVALID_TIMESTAMP,
REQUEST_EXPIRED and INVALID_SIGNATURE once the fields are known to be well formed.
"""
from __future__ import annotations

import re

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from gateway.fields import StrictCharField, StrictIntegerField
from refunds.models import REFUND_ID_MAX_LENGTH

TXN_ID_MAX = 50
MERCHANT_ID_MAX = 50
REASON_MAX = 255
REFUND_ID_PATTERN = re.compile(rf"^[A-Za-z0-9_-]{{1,{REFUND_ID_MAX_LENGTH}}}$")


class PaiseField(StrictIntegerField):
    """A positive JSON integer of paise. The upper bound is the payment's remaining amount,
    which the service checks under the payment's lock."""

    default_error_messages = {"invalid": "must be an integer number of paise", "range": "must be greater than 0 paise"}

    def __init__(self, **kwargs):
        super().__init__(low=1, **kwargs)


@extend_schema_field(OpenApiTypes.INT64)
class RawField(serializers.Field):
    """A timestamp, passed through as sent: gateway.signing.verify_timestamp judges it."""

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return value


def is_refund_id(value: str) -> bool:
    return bool(REFUND_ID_PATTERN.fullmatch(value))


def _one_of(attrs: dict, name: str, alias: str):
    """The value of `name` or of its alias `alias`; both present must agree."""
    value, alias_value = attrs.get(name), attrs.get(alias)
    if value is not None and alias_value is not None and value != alias_value:
        raise serializers.ValidationError({alias: f"must equal {name} when both are sent"})
    return value if value is not None else alias_value


class RefundCreateSerializer(serializers.Serializer):
    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX)
    sabpaisaTxnId = StrictCharField(max_length=TXN_ID_MAX, required=False)
    transactionId = StrictCharField(max_length=TXN_ID_MAX, required=False)   # SDK alias
    refundAmount = PaiseField(required=False)
    amount = PaiseField(required=False)                                      # SDK alias
    reason = StrictCharField(max_length=REASON_MAX, required=False, allow_blank=True, allow_null=True)
    refundId = StrictCharField(max_length=REFUND_ID_MAX_LENGTH, required=False)
    timestamp = RawField(required=False, allow_null=True)
    checksum = StrictCharField(max_length=128, required=False, allow_null=True)

    def validate_refundId(self, value):
        if not is_refund_id(value):
            raise serializers.ValidationError(
                f"must be 1 to {REFUND_ID_MAX_LENGTH} letters, digits, underscores or hyphens")
        return value

    def validate(self, attrs):
        txn_id = _one_of(attrs, "sabpaisaTxnId", "transactionId")
        if txn_id is None:
            raise serializers.ValidationError({"sabpaisaTxnId": "this field is required"})
        attrs["txn_id"] = txn_id
        attrs["amount_paise"] = _one_of(attrs, "refundAmount", "amount")  # None: the whole remaining amount
        attrs["reason"] = attrs.get("reason") or ""
        return attrs


class RefundListQuerySerializer(serializers.Serializer):
    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX)
    sabpaisaTxnId = StrictCharField(max_length=TXN_ID_MAX, required=False)
    transactionId = StrictCharField(max_length=TXN_ID_MAX, required=False)
    # Verified when sent, and required of merchants that require signed requests:
    # HMAC-SHA256 of merchantId|sabpaisaTxnId|timestamp (docs/security.md).
    checksum = StrictCharField(max_length=128, required=False)
    timestamp = RawField(required=False)

    def validate(self, attrs):
        txn_id = _one_of(attrs, "sabpaisaTxnId", "transactionId")
        if txn_id is None:
            raise serializers.ValidationError({"sabpaisaTxnId": "this query parameter is required"})
        attrs["txn_id"] = txn_id
        return attrs


class RefundGetQuerySerializer(serializers.Serializer):
    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX, required=False)
    checksum = StrictCharField(max_length=128, required=False)
    timestamp = RawField(required=False)


# Response shapes, for the OpenAPI document only (refunds.payloads builds the responses).

class RefundRecordSerializer(serializers.Serializer):
    refundId = serializers.CharField(help_text="the merchant's refundId, or a generated 'rfnd_...'")
    merchantId = serializers.CharField()
    sabpaisaTxnId = serializers.CharField()
    paymentId = serializers.CharField()
    merchantTxnId = serializers.CharField()
    refundAmount = serializers.IntegerField(help_text="paise")
    currency = serializers.CharField()
    status = serializers.CharField(help_text="PENDING, PROCESSED or FAILED (docs/refunds.md)")
    reason = serializers.CharField(allow_null=True)
    paymentMode = serializers.CharField(allow_null=True, help_text="the payment's method: the refund goes back by it")
    refundMethod = serializers.CharField(allow_null=True, help_text="e.g. 'original card ****1234'")
    bankRefundReference = serializers.CharField(allow_null=True, help_text="set when PROCESSED")
    failureReason = serializers.CharField(allow_null=True, help_text="set when FAILED")
    createdAt = serializers.DateTimeField()
    processedAt = serializers.DateTimeField(allow_null=True)
    failedAt = serializers.DateTimeField(allow_null=True)


class RefundResponseSerializer(RefundRecordSerializer):
    success = serializers.BooleanField(default=True)


class RefundCreatedSerializer(RefundResponseSerializer):
    message = serializers.CharField(default="refund initiated")


class RefundListSerializer(serializers.Serializer):
    success = serializers.BooleanField(default=True)
    sabpaisaTxnId = serializers.CharField()
    merchantTxnId = serializers.CharField()
    paidAmountPaise = serializers.IntegerField(help_text="paise; 0 unless the payment is SUCCESS")
    refundedAmount = serializers.IntegerField(help_text="paise, sum of PROCESSED refunds")
    refundPendingAmount = serializers.IntegerField(help_text="paise, sum of PENDING refunds")
    refundableAmount = serializers.IntegerField(help_text="paise still refundable")
    count = serializers.IntegerField()
    refunds = RefundRecordSerializer(many=True)
