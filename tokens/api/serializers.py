"""Request bodies of the token endpoints, and the response shapes for the OpenAPI document.

Types are strict, as everywhere in the API: a string where a boolean or an integer belongs is a
VALIDATION_ERROR naming the field (`consent.consentGiven`, ...), never converted.
"""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from django.core.validators import RegexValidator

from gateway.core.fields import NOT_BLANK_TEXT, StrictCharField
from tokens.services import CONSENT_TEXT_MAX


@extend_schema_field(OpenApiTypes.BOOL)
class StrictBooleanField(serializers.Field):
    default_error_messages = {"invalid": "must be a JSON boolean (true or false)"}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


@extend_schema_field({"type": "boolean", "enum": [True]})
class ConsentGivenField(StrictBooleanField):
    """Consent is given or there is no token: only `true` is accepted (the document says so with
    an enum of one value, OpenAPI 3.0's `const`). false is refused by the service."""


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": 10**11 - 1})
class UnixSecondsField(serializers.Field):
    """A JSON integer of Unix seconds (not a string, a fraction or a boolean)."""

    default_error_messages = {"invalid": "must be an integer number of Unix seconds"}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int) or not 0 <= data < 10**11:
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


class ConsentSerializer(serializers.Serializer):
    consentGiven = ConsentGivenField(help_text="must be true")
    consentTimestamp = UnixSecondsField(
        help_text="Unix seconds: when the customer consented. Not more than REQUEST_CLOCK_SKEW_SECONDS (30) ahead "
                  "of the service's clock, and not before the payment was created (less the same skew).")
    consentText = StrictCharField(max_length=CONSENT_TEXT_MAX, allow_line_breaks=True,
                                  help_text=f"the consent text, 1 to {CONSENT_TEXT_MAX} characters, not only spaces",
                                  validators=[RegexValidator(NOT_BLANK_TEXT, message="must not be blank")])

    def validate_consentText(self, value):
        if not value.strip():
            raise serializers.ValidationError("must not be blank")
        return value


class TokenCreateSerializer(serializers.Serializer):
    paymentId = StrictCharField(max_length=32, help_text="a SUCCESS card payment during which the customer "
                                                         "ticked 'save this card' on the checkout")
    consent = ConsentSerializer()


# --- for the OpenAPI document only ---------------------------------------------------------------

class TokenCreatedSchema(serializers.Serializer):
    tokenId = serializers.CharField(help_text="tok_ and 24 letters or digits")
    network = serializers.CharField(help_text="VISA, MASTERCARD, RUPAY, AMEX or DINERS")
    lastFourDigits = serializers.CharField()
    expiryMonth = serializers.CharField(help_text="two digits, 01 to 12. For display: the merchant must not store it")
    expiryYear = serializers.CharField(help_text="four digits. For display: the merchant must not store it")
    issuer = serializers.CharField(help_text="the issuing bank's name")
    createdAt = serializers.DateTimeField(help_text="ISO 8601, UTC, whole seconds, Z")


class TokenSchema(TokenCreatedSchema):
    status = serializers.ChoiceField(choices=["ACTIVE", "EXPIRED"],
                                     help_text="EXPIRED once the card's expiry month has passed; deleted tokens "
                                               "answer 404")
    paymentId = serializers.CharField(help_text="the payment the token was made from")
    consentTimestamp = serializers.IntegerField(help_text="as sent on creation (Unix seconds)")


class TokenDeletedSchema(serializers.Serializer):
    tokenId = serializers.CharField()
    status = serializers.ChoiceField(choices=["DELETED"])
    deletedAt = serializers.DateTimeField(help_text="ISO 8601, UTC, whole seconds, Z")
