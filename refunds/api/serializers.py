"""Request shapes of the refund endpoints, interface names and the official SDK's aliases.

Strict JSON types: a number where a string belongs, or a string, float or boolean where paise
belong, is a VALIDATION_ERROR naming the field, never silently converted. `timestamp` and
`checksum` are only checked for shape here: gateway.core.signing decides INVALID_TIMESTAMP,
REQUEST_EXPIRED and INVALID_SIGNATURE once the fields are known to be well formed.
"""
from __future__ import annotations

import re

from django.core.validators import RegexValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from gateway.core.fields import StrictCharField, StrictIntegerField
from refunds.models import REFUND_ID_MAX_LENGTH, Refund

TXN_ID_MAX = 50
MERCHANT_ID_MAX = 50
REASON_MAX = 500  # SabPaisa's limit (issue 17), and what SDK 1.0.1 checks before sending
REFUND_ID_PATTERN = re.compile(rf"^[A-Za-z0-9_-]{{1,{REFUND_ID_MAX_LENGTH}}}$")
REFUND_ID_MESSAGE = f"must be 1 to {REFUND_ID_MAX_LENGTH} letters, digits, underscores or hyphens"
# The refund list's paging (SabPaisa's, issue 17): pages count from 0; a page holds 1 to 100
# refunds, 20 when `size` is not sent (SabPaisa's docs give no default; docs/refunds.md).
LIST_PAGE_SIZE_DEFAULT = 20
LIST_PAGE_SIZE_MAX = 100
LIST_PAGE_MAX = 1_000_000


class PaiseField(StrictIntegerField):
    """A positive JSON integer of paise. The upper bound is the payment's remaining amount,
    which the service checks under the payment's lock."""

    default_error_messages = {"invalid": "must be an integer number of paise", "range": "must be greater than 0 paise"}

    def __init__(self, **kwargs):
        super().__init__(low=1, **kwargs)


@extend_schema_field(OpenApiTypes.INT64)
class RawField(serializers.Field):
    """A timestamp, passed through as sent: gateway.core.signing.verify_timestamp judges it."""

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return value


def is_refund_id(value: str) -> bool:
    return bool(REFUND_ID_PATTERN.fullmatch(value))


def _one_of(attrs: dict, name: str, *aliases: str):
    """The value of `name` or of one of its aliases; any two present must agree."""
    value = attrs.get(name)
    for alias in aliases:
        alias_value = attrs.get(alias)
        if alias_value is None:
            continue
        if value is not None and alias_value != value:
            raise serializers.ValidationError({alias: f"must equal {name} when both are sent"})
        value = alias_value
    return value


class RefundCreateSerializer(serializers.Serializer):
    # Absent: the merchant is the X-Merchant-Id header (SDK 1.0.1 sends no merchantId in the body).
    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX, required=False)
    sabpaisaTxnId = StrictCharField(max_length=TXN_ID_MAX, required=False)
    transactionId = StrictCharField(max_length=TXN_ID_MAX, required=False)   # SDK 3.0.0 alias
    txnId = StrictCharField(max_length=TXN_ID_MAX, required=False)           # SDK 1.0.1 alias
    refundAmount = PaiseField(required=False)
    amount = PaiseField(required=False)                                      # SDK alias
    reason = StrictCharField(max_length=REASON_MAX, required=False, allow_blank=True, allow_null=True)
    refundId = StrictCharField(max_length=REFUND_ID_MAX_LENGTH, required=False,
                               validators=[RegexValidator(REFUND_ID_PATTERN, message=REFUND_ID_MESSAGE)])
    timestamp = RawField(required=False, allow_null=True)
    checksum = StrictCharField(max_length=128, required=False, allow_null=True)

    def validate_refundId(self, value):
        if not is_refund_id(value):
            raise serializers.ValidationError(
                f"must be 1 to {REFUND_ID_MAX_LENGTH} letters, digits, underscores or hyphens")
        return value

    def validate(self, attrs):
        txn_id = _one_of(attrs, "sabpaisaTxnId", "transactionId", "txnId")
        if txn_id is None:
            raise serializers.ValidationError({"sabpaisaTxnId": "this field is required"})
        attrs["txn_id"] = txn_id
        attrs["amount_paise"] = _one_of(attrs, "refundAmount", "amount")  # None: the whole remaining amount
        attrs["reason"] = attrs.get("reason") or ""
        return attrs


class QueryIntegerField(serializers.Field):
    """A whole number written in decimal digits in a query string, from `low` to `high`."""

    default_error_messages = {"invalid": "must be a whole number", "range": "must be between {low} and {high}"}

    def __init__(self, *, low: int, high: int, **kwargs):
        self.low, self.high = low, high
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str) or not data.isascii() or not data.isdigit() or len(data) > 9:
            self.fail("invalid")
        value = int(data)
        if not self.low <= value <= self.high:
            self.fail("range", low=self.low, high=self.high)
        return value

    def to_representation(self, value):
        return value


class RefundListQuerySerializer(serializers.Serializer):
    """GET /api/v2/refunds. Every parameter is optional: without merchantId the merchant is the
    X-Merchant-Id header; without a transaction it lists all the merchant's refunds."""

    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX, required=False)
    sabpaisaTxnId = StrictCharField(max_length=TXN_ID_MAX, required=False)
    transactionId = StrictCharField(max_length=TXN_ID_MAX, required=False)
    txnId = StrictCharField(max_length=TXN_ID_MAX, required=False)
    status = serializers.ChoiceField(
        choices=Refund.Status.values, required=False,
        error_messages={"invalid_choice": "must be one of " + ", ".join(Refund.Status.values)})
    fromDate = serializers.DateField(input_formats=["%Y-%m-%d"], required=False,
                                     error_messages={"invalid": "must be a date, YYYY-MM-DD"})
    toDate = serializers.DateField(input_formats=["%Y-%m-%d"], required=False,
                                   error_messages={"invalid": "must be a date, YYYY-MM-DD"})
    page = QueryIntegerField(low=0, high=LIST_PAGE_MAX, required=False)
    size = QueryIntegerField(low=1, high=LIST_PAGE_SIZE_MAX, required=False)
    # Verified when sent, and required of merchants that require signed requests:
    # HMAC-SHA256 of merchantId|sabpaisaTxnId|timestamp (docs/security.md).
    checksum = StrictCharField(max_length=128, required=False)
    timestamp = RawField(required=False)

    def validate(self, attrs):
        attrs["txn_id"] = _one_of(attrs, "sabpaisaTxnId", "transactionId", "txnId")
        if "fromDate" in attrs and "toDate" in attrs and attrs["toDate"] < attrs["fromDate"]:
            raise serializers.ValidationError({"toDate": "must not be before fromDate"})
        attrs.setdefault("page", 0)
        attrs.setdefault("size", LIST_PAGE_SIZE_DEFAULT)
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
    txnId = serializers.CharField(help_text="SabPaisa's name for sabpaisaTxnId")
    paymentId = serializers.CharField()
    merchantTxnId = serializers.CharField()
    refundAmount = serializers.IntegerField(help_text="paise")
    amount = serializers.IntegerField(help_text="paise; SabPaisa's name for refundAmount")
    originalAmount = serializers.IntegerField(help_text="paise the customer paid for the payment")
    currency = serializers.CharField()
    message = serializers.CharField(help_text="the refund's state in words; for FAILED, the bank's reason")
    status = serializers.CharField(help_text="INITIATED, SUCCESS or FAILED (docs/refunds.md)")
    reason = serializers.CharField(allow_null=True)
    paymentMode = serializers.CharField(allow_null=True, help_text="the payment's method: the refund goes back by it")
    refundMethod = serializers.CharField(allow_null=True, help_text="e.g. 'original card ****1234'")
    bankRefundReference = serializers.CharField(allow_null=True, help_text="set when SUCCESS")
    bankRefundId = serializers.CharField(allow_null=True, help_text="SabPaisa's name for bankRefundReference")
    failureReason = serializers.CharField(allow_null=True, help_text="set when FAILED")
    createdAt = serializers.DateTimeField()
    processedAt = serializers.DateTimeField(allow_null=True)
    refundedAt = serializers.DateTimeField(allow_null=True, help_text="SabPaisa's name for processedAt")
    failedAt = serializers.DateTimeField(allow_null=True)


class RefundResponseSerializer(RefundRecordSerializer):
    success = serializers.BooleanField(default=True)


class RefundCreatedSerializer(RefundResponseSerializer):
    message = serializers.CharField(default="refund initiated")


class RefundListSerializer(serializers.Serializer):
    success = serializers.BooleanField(default=True)
    sabpaisaTxnId = serializers.CharField(required=False, help_text="only when a transaction was named")
    merchantTxnId = serializers.CharField(required=False, help_text="only when a transaction was named")
    paidAmountPaise = serializers.IntegerField(required=False,
                                               help_text="paise; 0 unless the payment is SUCCESS (with a transaction)")
    refundedAmount = serializers.IntegerField(required=False,
                                              help_text="paise, sum of SUCCESS refunds (with a transaction)")
    refundPendingAmount = serializers.IntegerField(required=False,
                                                   help_text="paise, sum of INITIATED refunds (with a transaction)")
    refundableAmount = serializers.IntegerField(required=False, help_text="paise still refundable (with a transaction)")
    count = serializers.IntegerField(help_text="refunds on this page")
    refunds = RefundRecordSerializer(many=True, help_text="this page's refunds")
    items = RefundRecordSerializer(many=True, help_text="the same page, under SabPaisa's name")
    page = serializers.IntegerField(help_text="from 0")
    size = serializers.IntegerField(help_text="1 to 100")
    totalElements = serializers.IntegerField(help_text="refunds matching the filters, on every page")
    totalPages = serializers.IntegerField()
