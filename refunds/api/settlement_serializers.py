"""The settlement endpoints' query shapes, the records they answer with, and those records'
shapes for the OpenAPI document (docs/settlements.md, "Through the API").

camelCase; every amount is integer paise; times are ISO 8601 UTC ('...Z') or null, as in the
refund record. A bad query parameter is a VALIDATION_ERROR naming it.
"""
from __future__ import annotations

from rest_framework import serializers

from gateway.core.fields import StrictCharField
from refunds.api.serializers import MERCHANT_ID_MAX, QueryIntegerField, RawField
from refunds.models import Settlement, SettlementLine
from refunds.selectors import settlement_public_id

# Paging, as the refund list pages: pages count from 0.
LIST_PAGE_SIZE_DEFAULT = 20
LIST_PAGE_SIZE_MAX = 100
LINES_PAGE_SIZE_DEFAULT = 500
LINES_PAGE_SIZE_MAX = 1000
PAGE_MAX = 1_000_000

DATE_ERRORS = {"invalid": "must be a date, YYYY-MM-DD"}


class SettlementListQuerySerializer(serializers.Serializer):
    """GET /api/v2/settlements. Every parameter is optional."""

    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX, required=False)
    fromDate = serializers.DateField(input_formats=["%Y-%m-%d"], required=False, error_messages=DATE_ERRORS)
    toDate = serializers.DateField(input_formats=["%Y-%m-%d"], required=False, error_messages=DATE_ERRORS)
    page = QueryIntegerField(low=0, high=PAGE_MAX, required=False)
    size = QueryIntegerField(low=1, high=LIST_PAGE_SIZE_MAX, required=False)
    # Verified when sent, and required of merchants that require signed requests (as on the
    # refund list): HMAC-SHA256 of merchantId|fromDate|toDate|timestamp.
    checksum = StrictCharField(max_length=128, required=False)
    timestamp = RawField(required=False)

    def validate(self, attrs):
        if "fromDate" in attrs and "toDate" in attrs and attrs["toDate"] < attrs["fromDate"]:
            raise serializers.ValidationError({"toDate": "must not be before fromDate"})
        attrs.setdefault("page", 0)
        attrs.setdefault("size", LIST_PAGE_SIZE_DEFAULT)
        return attrs


class SettlementGetQuerySerializer(serializers.Serializer):
    """GET /api/v2/settlements/{settlementId}: `page` and `size` page its lines."""

    merchantId = StrictCharField(max_length=MERCHANT_ID_MAX, required=False)
    page = QueryIntegerField(low=0, high=PAGE_MAX, required=False)
    size = QueryIntegerField(low=1, high=LINES_PAGE_SIZE_MAX, required=False)
    # HMAC-SHA256 of merchantId|settlementId|timestamp, as the list's.
    checksum = StrictCharField(max_length=128, required=False)
    timestamp = RawField(required=False)

    def validate(self, attrs):
        attrs.setdefault("page", 0)
        attrs.setdefault("size", LINES_PAGE_SIZE_DEFAULT)
        return attrs


# --- the records ----------------------------------------------------------------------------

def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if value else None


def settlement_record(settlement: Settlement) -> dict:
    """One settlement as a merchant reads it (the list's record; the detail adds `lineCount`)."""
    return {
        "settlementId": settlement_public_id(settlement),
        "merchantId": settlement.merchant.code,
        "utr": settlement.utr or None,
        "status": settlement.status or None,
        "periodStart": _iso(settlement.period_start),
        "periodEnd": _iso(settlement.period_end),
        "settledAt": _iso(settlement.settled_at),
        "currency": "INR",
        "grossAmount": settlement.gross,
        "feeAmount": settlement.fees,
        "taxAmount": settlement.tax,
        "refundsAmount": settlement.refunds,
        "chargebacksAmount": settlement.chargebacks,
        "adjustmentsAmount": settlement.adjustments,
        "netAmount": settlement.net,
    }


def settlement_line_record(line: SettlementLine) -> dict:
    """One event of a settlement. Our payment and refund are named when the line names one of
    ours; otherwise null (the reconciliation reports such a line to our finance team)."""
    payment, refund = line.payment, line.refund
    return {
        "eventId": line.processor_event_id,
        "type": line.kind.upper(),
        "amount": line.amount,
        "feeAmount": line.fee,
        "taxAmount": line.tax,
        "sabpaisaTxnId": payment.sabpaisa_txn_id if payment else None,
        "paymentId": payment.payment_id if payment else None,
        "merchantTxnId": payment.merchant_txn_id if payment else None,
        "refundId": refund.refund_id if refund else None,
    }


# --- their shapes, for the OpenAPI document only ----------------------------------------------

class SettlementRecordSerializer(serializers.Serializer):
    settlementId = serializers.CharField(help_text="'stl_' and 20 letters and digits")
    merchantId = serializers.CharField()
    utr = serializers.CharField(allow_null=True, help_text="the bank transfer's UTR, once the acquirer has paid")
    status = serializers.CharField(allow_null=True, help_text="the acquirer's word for the payout, e.g. SUCCESS")
    periodStart = serializers.DateTimeField(allow_null=True)
    periodEnd = serializers.DateTimeField(allow_null=True)
    settledAt = serializers.DateTimeField(allow_null=True, help_text="when the acquirer paid it out")
    currency = serializers.CharField()
    grossAmount = serializers.IntegerField(help_text="paise: the payments settled")
    feeAmount = serializers.IntegerField(help_text="paise: the acquirer's fees")
    taxAmount = serializers.IntegerField(help_text="paise: GST on the fees")
    refundsAmount = serializers.IntegerField(help_text="paise: refunds deducted")
    chargebacksAmount = serializers.IntegerField(help_text="paise: chargebacks deducted")
    adjustmentsAmount = serializers.IntegerField(help_text="paise, signed: credits less debits")
    netAmount = serializers.IntegerField(help_text="paise paid into the bank account")


class SettlementLineRecordSerializer(serializers.Serializer):
    eventId = serializers.CharField(help_text="the acquirer's id of the event")
    type = serializers.ChoiceField(choices=[kind.upper() for kind in SettlementLine.Kind.values])
    amount = serializers.IntegerField(help_text="paise; never negative except an ADJUSTMENT's (a debit)")
    feeAmount = serializers.IntegerField(help_text="paise")
    taxAmount = serializers.IntegerField(help_text="paise")
    sabpaisaTxnId = serializers.CharField(allow_null=True, help_text="our payment the line is about")
    paymentId = serializers.CharField(allow_null=True)
    merchantTxnId = serializers.CharField(allow_null=True)
    refundId = serializers.CharField(allow_null=True, help_text="our refund, on a REFUND line")


class _Paged(serializers.Serializer):
    page = serializers.IntegerField(help_text="from 0")
    size = serializers.IntegerField()
    totalElements = serializers.IntegerField(help_text="on every page")
    totalPages = serializers.IntegerField()


class SettlementListSerializer(_Paged):
    success = serializers.BooleanField(default=True)
    count = serializers.IntegerField(help_text="settlements on this page")
    settlements = SettlementRecordSerializer(many=True, help_text="this page's settlements, newest first")
    items = SettlementRecordSerializer(many=True, help_text="the same page, under SabPaisa's list name")


class SettlementDetailSerializer(SettlementRecordSerializer, _Paged):
    success = serializers.BooleanField(default=True)
    lineCount = serializers.IntegerField(help_text="the settlement's lines (events), on every page")
    lines = SettlementLineRecordSerializer(many=True, help_text="this page of the settlement's lines")
