"""The S2S UPI payment request (interface.md, S2S UPI payment request; docs/s2s.md).

Plain Serializers with strict JSON types: a number where a string belongs, a string where
paise belong, is a VALIDATION_ERROR naming the field, never converted. Fields are declared in
the interface's order, and the first failing one is the one named.

Not decided here: paymentMode's value (INVALID_PAYMENT_MODE), merchantId against the API key
(UNAUTHORIZED), timestamp (INVALID_TIMESTAMP / REQUEST_EXPIRED) and the checksum's value
(INVALID_SIGNATURE); payments.services.s2s does those, in that order, after these fields pass.
"""
from __future__ import annotations

import math
import re

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import EmailValidator
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from gateway.platform.api import RequestSerializer, validated
from gateway.core.errors import ValidationError
from gateway.core.fields import (
    CONTROL,
    CONTROL_BUT_WHITESPACE,
    HEX64,
    NOT_BLANK_LINE,
    StrictCharField,
    StrictIntegerField,
    is_unicode,
    strict_string_schema,
)
from gateway.core.urlcheck import validate_webhook_url
from payments.api.order_serializers import OrderFieldsSchema, order_details_validate
from payments.payloads import UDF_KEYS

AMOUNT_MIN = 100
AMOUNT_MAX = 100_000_000
MERCHANT_ID_MAX = 50
MERCHANT_TXN_ID_MAX = 100
CUSTOMER_NAME_MIN, CUSTOMER_NAME_MAX = 2, 100
CUSTOMER_EMAIL_MAX = 255
CUSTOMER_PHONE_MAX = 20
DESCRIPTION_MAX = 500
UDF_MAX = 255
METADATA_MAX_KEYS = 50
METADATA_KEY_MAX = 40
METADATA_VALUE_MAX = 500
UPI_EXPIRY_MIN, UPI_EXPIRY_MAX, UPI_EXPIRY_DEFAULT = 1, 60, 5
PAYMENT_MODES = ("UPI_QR", "UPI_INTENT")
WEBHOOK_URL_MAX = 500  # the merchant's own webhook address's limit

_MERCHANT_TXN_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_PHONE = re.compile(r"^\+?[0-9 ()-]+$")


class StrictString(StrictCharField):
    """A StrictCharField in S2S's words, with an optional pattern checked on non-empty values."""

    default_error_messages = {
        "required": "is required",
        "null": "must not be null",
        "blank": "must not be empty",
        "max_length": "must be at most {max_length} characters",
        "min_length": "must be at least {min_length} characters",
        "pattern": "has characters outside the allowed set",
    }

    def __init__(self, *, pattern: re.Pattern | None = None, pattern_message: str | None = None, **kwargs):
        self.pattern = pattern
        self.pattern_message = pattern_message
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if self.pattern is not None and value and not self.pattern.match(value):
            raise serializers.ValidationError(self.pattern_message or self.error_messages["pattern"])
        return value


class StrictInteger(StrictIntegerField):
    """A StrictIntegerField in S2S's words."""

    default_error_messages = {"required": "is required", "null": "must not be null"}


@extend_schema_field(OpenApiTypes.INT64)
class AnyValue(serializers.JSONField):
    """Passes any JSON value through (its checks are made elsewhere)."""


class EmailString(StrictString):
    _validator = EmailValidator(message="must be a valid email address")

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            self._validator(value)
        except DjangoValidationError:
            raise serializers.ValidationError("must be a valid email address") from None
        return value


@extend_schema_field({"type": "string", "enum": ["INR"]})
class CurrencyString(StrictString):
    """The currency: INR is the only one (checked by the serializer's validate_currency)."""


@extend_schema_field({"type": "string", "enum": list(PAYMENT_MODES)})
class PaymentModeString(StrictString):
    """Only the type is checked here: a string that is not UPI_QR or UPI_INTENT is
    INVALID_PAYMENT_MODE (payments.services.s2s), not VALIDATION_ERROR."""


class StrictStringSchema(OpenApiSerializerFieldExtension):
    """A StrictString in the OpenAPI document: its pattern, and format email for an EmailString
    (lengths come from the field's validators). Read from the attributes that validate, so the
    document cannot drift from the checks."""

    target_class = StrictString
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = strict_string_schema(self.target)
        if self.target.pattern is not None:
            schema["pattern"] = self.target.pattern.pattern
        elif isinstance(self.target, NonBlankName):
            schema["pattern"] = NOT_BLANK_LINE
        if isinstance(self.target, EmailString):
            schema["format"] = "email"
        return schema


class NonBlankName(StrictString):
    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not value.strip():
            raise serializers.ValidationError("must not be only spaces")
        return value


@extend_schema_field({"type": "object", "maxProperties": METADATA_MAX_KEYS, "nullable": True,
                      "additionalProperties": {"oneOf": [{"type": "string", "maxLength": METADATA_VALUE_MAX},
                                                         {"type": "number"}, {"type": "boolean"}],
                                               "nullable": True}})
class Metadata(serializers.Field):
    """Free key-value pairs: at most 50 keys of at most 40 characters; each value a string of at
    most 500 characters, a number, a boolean or null (nothing nested)."""

    default_error_messages = {"required": "is required", "invalid": "must be a JSON object"}

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.fail("invalid")
        if len(data) > METADATA_MAX_KEYS:
            raise serializers.ValidationError(f"must have at most {METADATA_MAX_KEYS} keys")
        for key, value in data.items():
            if not key or len(key) > METADATA_KEY_MAX or CONTROL.search(key) or not is_unicode(key):
                raise serializers.ValidationError(
                    f"keys must be 1 to {METADATA_KEY_MAX} characters without control characters")
            # The error names the key only once the key is known to be printable.
            if isinstance(value, str):
                if len(value) > METADATA_VALUE_MAX:
                    raise serializers.ValidationError(
                        {key: f"must be at most {METADATA_VALUE_MAX} characters"})
                if CONTROL_BUT_WHITESPACE.search(value) or not is_unicode(value):
                    raise serializers.ValidationError({key: "must not contain control or surrogate characters"})
            elif isinstance(value, float) and not math.isfinite(value):
                # 1e400 parses as infinity, which JSON (and PostgreSQL's jsonb) cannot hold.
                raise serializers.ValidationError({key: "must be a finite number"})
            elif value is not None and not isinstance(value, (bool, int, float)):
                raise serializers.ValidationError({key: "must be a string, a number, a boolean or null"})
        return data

    def to_representation(self, value):
        return value


class S2SPaymentRequestSerializer(RequestSerializer):
    merchantId = StrictString(max_length=MERCHANT_ID_MAX)
    merchantTxnId = StrictString(max_length=MERCHANT_TXN_ID_MAX, pattern=_MERCHANT_TXN_ID,
                                 pattern_message="must be letters, digits, underscores or hyphens")
    amount = StrictInteger(low=AMOUNT_MIN, high=AMOUNT_MAX)
    currency = CurrencyString()
    customerName = NonBlankName(min_length=CUSTOMER_NAME_MIN, max_length=CUSTOMER_NAME_MAX)
    customerEmail = EmailString(max_length=CUSTOMER_EMAIL_MAX)
    customerPhone = StrictString(max_length=CUSTOMER_PHONE_MAX, pattern=_PHONE,
                                 pattern_message="must be digits, optionally with +, spaces, hyphens or parentheses")
    # Only the type here: a string that is not UPI_QR / UPI_INTENT is INVALID_PAYMENT_MODE.
    paymentMode = PaymentModeString(allow_blank=True)
    checksum = StrictString(pattern=HEX64, pattern_message="must be exactly 64 hexadecimal characters")
    # Any value passes here: payments.services.s2s decides it (missing or malformed is
    # INVALID_TIMESTAMP, not VALIDATION_ERROR, as the interface says).
    timestamp = AnyValue(required=False, allow_null=True, help_text="Unix seconds; part of the checksum")
    description = StrictString(required=False, allow_null=True, allow_blank=True, allow_line_breaks=True,
                               max_length=DESCRIPTION_MAX)
    upiExpiryMinutes = StrictInteger(low=UPI_EXPIRY_MIN, high=UPI_EXPIRY_MAX, required=False, allow_null=True)
    metadata = Metadata(required=False, allow_null=True)

    def validate_currency(self, value):
        if value != "INR":
            raise serializers.ValidationError("must be INR")
        return value


for _key in UDF_KEYS:
    S2SPaymentRequestSerializer._declared_fields[_key] = StrictString(
        required=False, allow_null=True, allow_blank=True, allow_line_breaks=True, max_length=UDF_MAX)


@extend_schema_field({"type": "string", "pattern": r"^$|^https?://[^\s/?#@:]+(:[0-9]{1,5})?([/?#][!-~]*)?$"})
class WebhookUrlSchemaField(serializers.CharField):
    """webhookUrl in the document (s2s_request_validate's _webhook_url checks it)."""


@extend_schema_serializer(component_name="S2SPaymentRequest")  # the document's name before the order fields
class S2SPaymentRequestSchema(S2SPaymentRequestSerializer, OrderFieldsSchema):
    """For the API schema only: the request with the order fields and webhookUrl."""

    webhookUrl = WebhookUrlSchemaField(required=False, allow_null=True, max_length=WEBHOOK_URL_MAX,
                                       help_text="where this payment's webhooks go instead of the merchant's "
                                                 "address: an http(s) address without user or password whose host "
                                                 "resolves only to public addresses (never loopback, private, "
                                                 "link-local or carrier-grade NAT); \"\" or null: not sent")


class S2SPaymentResponseSerializer(serializers.Serializer):
    """The success body, for the API schema only (payments.services.s2s.s2s_response builds it)."""

    success = serializers.BooleanField()
    paymentId = serializers.CharField()
    txnId = serializers.CharField()
    merchantTxnId = serializers.CharField()
    status = serializers.ChoiceField(choices=["PROCESSING"])
    amount = serializers.IntegerField(help_text="paise")
    currency = serializers.CharField()
    paymentMode = serializers.ChoiceField(choices=PAYMENT_MODES)
    upiQrString = serializers.CharField(allow_null=True, help_text="upi://pay link; null for UPI_INTENT")
    intentUrl = serializers.CharField(allow_null=True, help_text="upi://pay link; null for UPI_QR")
    expiresAt = serializers.DateTimeField(help_text="when the QR / intent link expires")
    message = serializers.CharField()
    traceId = serializers.CharField()


def _first_error(errors, path: str = "") -> tuple[str, str]:
    if isinstance(errors, dict):
        key, value = next(iter(errors.items()))
        name = path if key == "non_field_errors" else (f"{path}.{key}" if path else str(key))
        return _first_error(value, name)
    if isinstance(errors, list) and errors:
        return _first_error(errors[0], path)
    return path, str(errors)


def s2s_request_validate(body) -> dict:
    """The request's fields, checked. Raises gateway.core.errors.ValidationError naming the first
    field (in the interface's order) that is missing or violates its constraint."""
    if not isinstance(body, dict):
        raise ValidationError("must be a JSON object", field="body")
    try:
        data = dict(validated(S2SPaymentRequestSerializer, body))
    except serializers.ValidationError as exc:
        field, message = _first_error(exc.detail)
        raise ValidationError(message, field=field or "body") from None
    data["upiExpiryMinutes"] = data.get("upiExpiryMinutes") or UPI_EXPIRY_DEFAULT
    data["order_details"] = order_details_validate(body)
    data["webhookUrl"] = _webhook_url(body.get("webhookUrl"))
    return data


def _webhook_url(value) -> str:
    """webhookUrl, checked as the merchant's own webhook address is in production
    (gateway.core.urlcheck), in every environment: "" when not sent (null or empty mean not sent)."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise ValidationError("must be a string", field="webhookUrl")
    if len(value) > WEBHOOK_URL_MAX:
        raise ValidationError(f"must be at most {WEBHOOK_URL_MAX} characters", field="webhookUrl")
    if CONTROL.search(value) or not is_unicode(value):
        raise ValidationError("must not contain control characters", field="webhookUrl")
    # It arrived in an API request: public addresses only, in staging too (issue 29).
    return validate_webhook_url(value, field="webhookUrl", from_request=True)
