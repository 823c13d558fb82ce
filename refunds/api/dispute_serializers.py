"""Request shapes of the dispute endpoints (docs/disputes.md). A bad filter is a
VALIDATION_ERROR naming the field."""
from __future__ import annotations

from rest_framework import serializers

from gateway.core.fields import StrictCharField
from refunds.api.serializers import (
    LIST_PAGE_MAX,
    LIST_PAGE_SIZE_DEFAULT,
    LIST_PAGE_SIZE_MAX,
    MERCHANT_ID_MAX,
    TXN_ID_MAX,
    QueryIntegerField,
)
from refunds.models import Dispute

STATUS_WORDS = [status.upper() for status in Dispute.Status.values]


class DisputeStatusField(serializers.Field):
    """A dispute status as the API writes it (NEEDS_RESPONSE), in either case: the stored word."""

    default_error_messages = {"invalid": "must be one of " + ", ".join(STATUS_WORDS)}

    def to_internal_value(self, data):
        if not isinstance(data, str) or data.lower() not in Dispute.Status.values:
            self.fail("invalid")
        return data.lower()

    def to_representation(self, value):
        return value.upper()


class DisputeListQuerySerializer(serializers.Serializer):
    """GET /api/v2/disputes: every parameter optional; the merchant is merchantId or X-Merchant-Id."""

    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX, required=False)
    sabpaisaTxnId = StrictCharField(max_length=TXN_ID_MAX, required=False)
    status = DisputeStatusField(required=False)
    fromDate = serializers.DateField(input_formats=["%Y-%m-%d"], required=False,
                                     error_messages={"invalid": "must be a date, YYYY-MM-DD"})
    toDate = serializers.DateField(input_formats=["%Y-%m-%d"], required=False,
                                   error_messages={"invalid": "must be a date, YYYY-MM-DD"})
    page = QueryIntegerField(low=0, high=LIST_PAGE_MAX, required=False)
    size = QueryIntegerField(low=1, high=LIST_PAGE_SIZE_MAX, required=False)

    def validate(self, attrs):
        unknown = sorted(set(self.initial_data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({unknown[0]: "is not a filter of this list"})
        if "fromDate" in attrs and "toDate" in attrs and attrs["toDate"] < attrs["fromDate"]:
            raise serializers.ValidationError({"toDate": "must not be before fromDate"})
        attrs.setdefault("page", 0)
        attrs.setdefault("size", LIST_PAGE_SIZE_DEFAULT)
        return attrs


class DisputeGetQuerySerializer(serializers.Serializer):
    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX, required=False)


class DisputeEvidenceRequestSerializer(serializers.Serializer):
    """The evidence upload's form, for the OpenAPI document (the view reads the form itself)."""

    file = serializers.FileField(help_text="PDF, PNG or JPEG, judged by its content")
    docType = serializers.CharField(help_text="one of the dispute's preferredEvidence types")
    note = serializers.CharField(required=False, max_length=500)
    merchantId = serializers.CharField(required=False, max_length=MERCHANT_ID_MAX)


# Response shapes, for the OpenAPI document only (refunds.disputes.payloads builds the responses).

class EvidenceTypeSerializer(serializers.Serializer):
    type = serializers.CharField()
    description = serializers.CharField()


class DisputeRecordSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    disputeId = serializers.CharField()
    merchantId = serializers.CharField()
    sabpaisaTxnId = serializers.CharField()
    txnId = serializers.CharField()
    paymentId = serializers.CharField()
    merchantTxnId = serializers.CharField()
    type = serializers.ChoiceField(choices=[kind.upper() for kind in Dispute.Kind.values])
    status = serializers.ChoiceField(choices=STATUS_WORDS)
    processorStatus = serializers.CharField(allow_null=True)
    reasonCode = serializers.CharField(allow_null=True)
    reasonDescription = serializers.CharField(allow_null=True)
    amount = serializers.IntegerField(help_text="paise")
    currency = serializers.CharField()
    respondBy = serializers.DateTimeField(allow_null=True, help_text="UTC")
    preferredEvidence = EvidenceTypeSerializer(many=True)
    evidenceSubmitted = serializers.BooleanField()
    evidenceSubmittedAt = serializers.DateTimeField(allow_null=True)
    evidence = serializers.ListField(child=serializers.CharField())
    acceptedAt = serializers.DateTimeField(allow_null=True)
    outcome = serializers.ChoiceField(choices=["WON", "LOST", "ACCEPTED"], allow_null=True)
    remarks = serializers.CharField(allow_null=True)
    openedAt = serializers.DateTimeField(allow_null=True)
    resolvedAt = serializers.DateTimeField(allow_null=True)
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()


class DisputeListSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    count = serializers.IntegerField()
    disputes = DisputeRecordSerializer(many=True)
    items = DisputeRecordSerializer(many=True)
    page = serializers.IntegerField()
    size = serializers.IntegerField()
    totalElements = serializers.IntegerField()
    totalPages = serializers.IntegerField()
