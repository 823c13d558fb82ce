"""Request bodies of the hosted-checkout API: creation and the two enquiry forms.

Plain Serializers with strict types: a number where a string belongs (or a string where paise
belong) is a VALIDATION_ERROR naming the field, never silently converted. `checksum` must be
64 hex characters here; whether it is right, and `timestamp` (INVALID_TIMESTAMP /
REQUEST_EXPIRED), is gateway.core.signing's to decide once the fields are known to be well formed.
"""
from __future__ import annotations

import math

from django.core.validators import EmailValidator, RegexValidator, URLValidator
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from gateway.platform.api import RequestSerializer
from gateway.core.fields import (
    CONTROL,
    CONTROL_BUT_WHITESPACE,
    HEX64,
    WEB_ADDRESS_PATTERN,
    StrictCharField,
    StrictIntegerField,
    is_unicode,
)
from payments.api.order_serializers import OrderFieldsSchema
from payments.payloads import UDF_KEYS

# Bounds of a hosted payment (docs/hosted-checkout.md): the same as S2S, where the interface
# states them, and Stripe-like limits on metadata.
AMOUNT_MIN_PAISE = 100
AMOUNT_MAX_PAISE = 100_000_000
MERCHANT_TXN_ID_MAX = 50
CUSTOMER_NAME_MAX = 100
CUSTOMER_EMAIL_MAX = 255
DESCRIPTION_MAX = 500
RETURN_URL_MAX = 2000
METADATA_MAX_KEYS = 50
METADATA_KEY_MAX = 40
METADATA_VALUE_MAX = 500
UDF_MAX = 255

_PHONE = r"^[0-9]{10}\Z"  # ASCII digits: \d would also take other scripts' digits


class PaiseField(StrictIntegerField):
    """A JSON integer (not a string, float or boolean) of paise within the bounds."""

    default_error_messages = {
        "invalid": "must be an integer number of paise",
        "range": "must be between {low} and {high} paise",
    }

    def __init__(self, **kwargs):
        super().__init__(low=AMOUNT_MIN_PAISE, high=AMOUNT_MAX_PAISE, **kwargs)


@extend_schema_field({"type": "string", "format": "uri", "pattern": WEB_ADDRESS_PATTERN})
class ReturnUrlField(StrictCharField):
    """An absolute http(s) address. The customer's browser goes there, the gateway never
    fetches it, so loopback and private hosts are fine (merchants test on localhost)."""

    _validator = URLValidator(schemes=["http", "https"])

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            self._validator(value)
        except DjangoValidationError:
            raise serializers.ValidationError("must be an absolute http or https URL") from None
        return value


@extend_schema_field({"type": "object", "maxProperties": METADATA_MAX_KEYS,
                      "additionalProperties": {"oneOf": [{"type": "string", "maxLength": METADATA_VALUE_MAX},
                                                         {"type": "number"}, {"type": "boolean"}],
                                               "nullable": True}})
class MetadataField(serializers.Field):
    """A flat JSON object: at most 50 keys of at most 40 characters; values are strings of at
    most 500 characters, numbers, booleans or null."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be a JSON object")
        if len(data) > METADATA_MAX_KEYS:
            raise serializers.ValidationError(f"must have at most {METADATA_MAX_KEYS} keys")
        for key, value in data.items():
            if not key or len(key) > METADATA_KEY_MAX:
                raise serializers.ValidationError(f"keys must be 1 to {METADATA_KEY_MAX} characters")
            if CONTROL.search(key) or not is_unicode(key):
                raise serializers.ValidationError("keys must not contain control or surrogate characters")
            if isinstance(value, (dict, list)):
                raise serializers.ValidationError(f"{key}: values must be strings, numbers, booleans or null")
            if isinstance(value, str) and len(value) > METADATA_VALUE_MAX:
                raise serializers.ValidationError(f"{key}: string values must be at most {METADATA_VALUE_MAX} characters")
            if isinstance(value, str) and (CONTROL_BUT_WHITESPACE.search(value) or not is_unicode(value)):
                raise serializers.ValidationError(f"{key}: must not contain control or surrogate characters")
            if isinstance(value, float) and not math.isfinite(value):
                # 1e400 parses as infinity, which JSON (and PostgreSQL's jsonb) cannot hold.
                raise serializers.ValidationError(f"{key}: must be a finite number")
        return data

    def to_representation(self, value):
        return value


@extend_schema_field({"type": "string", "pattern": HEX64.pattern})
class ChecksumField(StrictCharField):
    """64 hex characters, else VALIDATION_ERROR. Whether it is the right digest is
    gateway.core.signing's question, compared exactly (docs/decisions.md: upper case is
    INVALID_SIGNATURE)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not HEX64.fullmatch(value):
            raise serializers.ValidationError("must be exactly 64 hexadecimal characters")
        return value


class HostedPaymentCreateSerializer(RequestSerializer):
    merchantId = StrictCharField(max_length=50)
    merchantTxnId = StrictCharField(max_length=MERCHANT_TXN_ID_MAX)
    amount = PaiseField()
    currency = serializers.ChoiceField(choices=["INR"], error_messages={"invalid_choice": "must be INR"})
    returnUrl = ReturnUrlField(max_length=RETURN_URL_MAX)
    customerName = StrictCharField(max_length=CUSTOMER_NAME_MAX, required=False, allow_blank=True, allow_null=True)
    # Validators (run on non-blank values only) both check and document: the OpenAPI schema
    # shows them as format and pattern.
    customerEmail = StrictCharField(max_length=CUSTOMER_EMAIL_MAX, required=False, allow_blank=True, allow_null=True,
                                    validators=[EmailValidator(message="must be a valid email address")])
    customerPhone = StrictCharField(required=False, allow_blank=True, allow_null=True,
                                    validators=[RegexValidator(_PHONE, message="must be exactly 10 digits")])
    description = StrictCharField(max_length=DESCRIPTION_MAX, required=False, allow_blank=True, allow_null=True,
                                  allow_line_breaks=True)
    metadata = MetadataField(required=False, allow_null=True)
    # The live API's session field (UPSTREAM.md): the checkout page's language, at most 10
    # characters. Stored as sent; the page speaks it when it knows it, else English.
    language = StrictCharField(max_length=10, required=False, allow_blank=True, allow_null=True,
                               help_text="the checkout page's language: hi or en (others fall back to English)")
    tokenId = StrictCharField(max_length=100, required=False, allow_null=True,
                              help_text="beta, staging only: pay with this saved card token (docs/tokens.md)")
    checksum = ChecksumField()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # udf1..udf20: accepted as for S2S (CONTRACT.md) and echoed in webhooks.
        for key in UDF_KEYS:
            self.fields[key] = StrictCharField(max_length=UDF_MAX, required=False, allow_blank=True, allow_null=True,
                                               allow_line_breaks=True)

    def validate_customerEmail(self, value):
        # Blank means "not given": the official SDK always sends the key.
        return value or ""

    def validate_customerPhone(self, value):
        return value or ""

    def validate_customerName(self, value):
        return value or ""

    def validate_description(self, value):
        return value or ""

    def validate_language(self, value):
        return value or ""

    def validate(self, attrs):
        attrs["udf"] = {key: attrs.pop(key) for key in UDF_KEYS if attrs.get(key) is not None}
        for key in UDF_KEYS:
            attrs.pop(key, None)
        attrs["metadata"] = attrs.get("metadata") or {}
        return attrs


class EnquiryQuerySerializer(serializers.Serializer):
    """GET /api/v2/payments?merchantId=..&merchantTxnId=..[&spTxnId=..], optionally (and, for
    merchants that require signed requests, necessarily) signed with checksum and timestamp as
    the POST form is."""

    merchantId = StrictCharField(max_length=50)
    merchantTxnId = StrictCharField(max_length=100)
    spTxnId = StrictCharField(max_length=100, required=False,
                              help_text="optional: the payment's sabpaisaTxnId; another payment's is NOT_FOUND")
    checksum = ChecksumField(required=False)


class EnquiryBodySerializer(serializers.Serializer):
    """POST /api/v2/payments/enquiry: the interface names the merchant `clientCode`, the
    official SDK 3.0.0 `merchantId`; either (or both, equal) is accepted, and with neither the
    view takes X-Merchant-Id (SDK 1.0.1). `spTxnId` (1.0.1) must be the payment's sabpaisaTxnId.
    `checksum` and `timestamp` are verified by the view when present."""

    clientCode = StrictCharField(max_length=50, required=False)
    merchantId = StrictCharField(max_length=50, required=False)
    merchantTxnId = StrictCharField(max_length=100)
    spTxnId = StrictCharField(max_length=100, required=False)
    checksum = ChecksumField(required=False)

    def validate(self, attrs):
        codes = {attrs.get("clientCode"), attrs.get("merchantId")} - {None}
        if not codes:
            raise serializers.ValidationError(
                {"clientCode": "clientCode (or merchantId, or the X-Merchant-Id header) is required"})
        if len(codes) > 1:
            raise serializers.ValidationError({"clientCode": "clientCode and merchantId name different merchants"})
        attrs["merchant_code"] = codes.pop()
        return attrs


# --- for the OpenAPI document only ---------------------------------------------------------------

class HostedPaymentRequestSchema(HostedPaymentCreateSerializer, OrderFieldsSchema):
    timestamp = serializers.IntegerField(help_text="Unix seconds; at most 5 minutes old. Missing or in the "
                                                   "future: INVALID_TIMESTAMP; older: REQUEST_EXPIRED.")


class HostedSessionResponseSchema(serializers.Serializer):
    success = serializers.BooleanField(help_text="true")
    status = serializers.CharField(help_text="PENDING")
    sabpaisaTxnId = serializers.CharField()
    paymentId = serializers.CharField()
    checkoutUrl = serializers.URLField(help_text="No query string: send the customer to "
                                                 "checkoutUrl?clientSecret=<clientSecret>.")
    clientSecret = serializers.CharField(help_text="URL-safe; returned only here, stored only as a hash.")
    expiresAt = serializers.DateTimeField(help_text="ISO 8601, UTC; CHECKOUT_SESSION_TTL_SECONDS after creation.")
    merchantTxnId = serializers.CharField(help_text="echoes the request")
    amount = serializers.IntegerField(help_text="paise")
    currency = serializers.CharField()
    message = serializers.CharField()
    traceId = serializers.CharField(help_text="of the request that created the session (a replay repeats it)")


class TransactionSchema(serializers.Serializer):
    success = serializers.BooleanField(help_text="true")
    sabpaisaTxnId = serializers.CharField()
    txnId = serializers.CharField(help_text="the same as sabpaisaTxnId (SabPaisa's name)")
    paymentId = serializers.CharField()
    merchantId = serializers.CharField()
    merchantTxnId = serializers.CharField()
    status = serializers.CharField(help_text="SUCCESS, FAILED, PENDING or EXPIRED (PROCESSING reads PENDING)")
    amount = serializers.IntegerField(help_text="paise")
    currency = serializers.CharField()
    paidAmount = serializers.FloatField(help_text="RUPEES (the one field in rupees); 0 when unpaid")
    paymentMode = serializers.CharField(allow_null=True, help_text="UPI, CARD, NB, WALLET, NEFT, RTGS, CHALLAN; "
                                                                   "null before a method is chosen")
    customerName = serializers.CharField()
    customerEmail = serializers.CharField()
    customerMobile = serializers.CharField(allow_null=True, help_text="customerPhone as sent; null when not sent")
    bankRrn = serializers.CharField(allow_null=True, help_text="bank reference; set on SUCCESS")
    bankTxnId = serializers.CharField(allow_null=True, help_text="the same as bankRrn (SabPaisa's name)")
    initiatedAt = serializers.DateTimeField(help_text="creation, UTC")
    completedAt = serializers.DateTimeField(allow_null=True, help_text="when the status became final, UTC")
    refundedAmount = serializers.IntegerField(help_text="paise refunded (processed)")
    refundPendingAmount = serializers.IntegerField(help_text="paise of refunds accepted, not yet processed")
    traceId = serializers.CharField()


class EnquiryBodyResponseSchema(TransactionSchema):
    amountPaise = serializers.IntegerField(help_text="paise (the same as amount)")


class EnquiryBodyRequestSchema(EnquiryBodySerializer):
    timestamp = serializers.IntegerField(required=False, help_text="with checksum: Unix seconds")
