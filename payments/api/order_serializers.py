"""The optional order fields of both creation requests (hosted and S2S): customerId, the two
addresses, shippingSameAsBilling, lineItems and orderSummary (issue 17; SabPaisa's order
payload, which its SDK 1.0.1 sends). docs/hosted-checkout.md lists them with their limits.

They are checked as strictly as the rest of the request (JSON types are never converted; an
unknown field inside an address, a line item or the summary is refused rather than stored
unchecked) and kept as sent, in the payment's one `order` column, for the support console.
Amounts are integer paise. They are not required to add up to the payment's `amount`: the
gateway charges `amount`, which the checksum covers, and the order describes it
(docs/decisions.md).

Errors name the field by its path: `billingAddress.postalCode`, `lineItems[3].quantity`.
"""
from __future__ import annotations

import math
import re

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import RegexValidator, URLValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from gateway.platform.api import RequestSerializer, validated
from gateway.core.errors import ValidationError
from gateway.core.fields import WEB_ADDRESS_PATTERN, StrictCharField, StrictIntegerField

CUSTOMER_ID_MAX = 100
LINE_ITEMS_MAX = 100
PAISE_MAX = 100_000_000_000  # ₹1,000 crore: far above any one payment, well inside a bigint
QUANTITY_MAX = 1_000_000
URL_MAX = 2000

ORDER_FIELDS = ("customerId", "billingAddress", "shippingAddress", "shippingSameAsBilling", "lineItems",
                "orderSummary")

_HSN = re.compile(r"^[0-9]{2,8}\Z")  # HSN (goods) and SAC (services) codes: 2 to 8 digits


def _text(max_length: int, **kwargs) -> StrictCharField:
    return StrictCharField(max_length=max_length, required=False, allow_blank=True, allow_null=True, **kwargs)


def _paise(**kwargs) -> StrictIntegerField:
    return StrictIntegerField(low=0, high=PAISE_MAX, **kwargs)


# Blank means not given here, so the document allows "" beside an address.
@extend_schema_field({"type": "string", "pattern": "^$|" + WEB_ADDRESS_PATTERN})
class WebAddressField(StrictCharField):
    """An absolute http(s) URL (a product page or image, shown as a link in the console)."""

    _validator = URLValidator(schemes=["http", "https"])

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value:
            try:
                self._validator(value)
            except DjangoValidationError:
                raise serializers.ValidationError("must be an absolute http or https URL") from None
        return value


class AddressSerializer(RequestSerializer):
    name = _text(100)
    line1 = _text(200)
    line2 = _text(200)
    landmark = _text(200)
    city = _text(100)
    state = _text(100)
    postalCode = _text(20)
    country = _text(60)
    phone = _text(20)


class LineItemSerializer(RequestSerializer):
    name = StrictCharField(max_length=200)
    description = _text(500, allow_line_breaks=True)
    sku = _text(100)
    category = _text(100)
    # Blank means not given; the validator (the document's pattern) judges the rest.
    hsnCode = _text(8, validators=[RegexValidator(r"^(|[0-9]{2,8})$",
                                                  message="must be 2 to 8 digits (an HSN or SAC code)")])
    quantity = StrictIntegerField(low=1, high=QUANTITY_MAX)
    unitPrice = _paise()
    discount = _paise(required=False, allow_null=True)
    taxPercent = serializers.FloatField(min_value=0, max_value=100, required=False, allow_null=True)
    tax = _paise(required=False, allow_null=True)
    imageUrl = WebAddressField(max_length=URL_MAX, required=False, allow_blank=True, allow_null=True)
    productUrl = WebAddressField(max_length=URL_MAX, required=False, allow_blank=True, allow_null=True)

    def validate_hsnCode(self, value):
        if value and not _HSN.match(value):
            raise serializers.ValidationError("must be 2 to 8 digits (an HSN or SAC code)")
        return value


class OrderSummarySerializer(RequestSerializer):
    subtotal = _paise()
    shippingAmount = _paise(required=False, allow_null=True)
    shippingMethod = _text(100)
    discountAmount = _paise(required=False, allow_null=True)
    discountCode = _text(50)
    taxAmount = _paise(required=False, allow_null=True)
    convenienceFee = _paise(required=False, allow_null=True)
    totalAmount = _paise()


def _object(serializer_class, value, path: str) -> dict:
    """`value` checked by `serializer_class`: a JSON object of its fields only. The fields
    sent as null are dropped (they mean "not given")."""
    if not isinstance(value, dict):
        raise ValidationError("must be a JSON object", field=path)
    declared = _declared(serializer_class)
    for key in value:
        if key not in declared:
            raise ValidationError(f"has an unknown field {key!r} (allowed: {', '.join(declared)})", field=path)
    if serializer_class is LineItemSerializer:
        _check_number(value.get("taxPercent"), f"{path}.taxPercent")
    try:
        checked = validated(serializer_class, value)
    except serializers.ValidationError as exc:
        name, message = _first(exc.detail)
        raise ValidationError(message, field=f"{path}.{name}" if name else path) from None
    return {key: item for key, item in checked.items() if item is not None}


def _declared(serializer_class) -> tuple[str, ...]:
    return tuple(serializer_class._declared_fields)


def _check_number(value, path: str) -> None:
    # DRF's FloatField converts "18" and True; a percentage here is a JSON number.
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise ValidationError("must be a number", field=path)


def _first(detail) -> tuple[str, str]:
    """The first (field name, message) of a flat serializer's errors."""
    if isinstance(detail, dict):
        name, messages = next(iter(detail.items()))
        message = messages[0] if isinstance(messages, list) and messages else messages
        return ("" if name == "non_field_errors" else str(name)), str(message)
    if isinstance(detail, list) and detail:
        return "", str(detail[0])
    return "", str(detail)


_CUSTOMER_ID = StrictCharField(max_length=CUSTOMER_ID_MAX)


def order_details_validate(body: dict) -> dict:
    """The order fields of a creation request, checked: a dict of those sent (null means not
    sent), {} when none is. Raises gateway.core.errors.ValidationError naming the field's path."""
    order: dict = {}
    value = body.get("customerId")
    if value is not None:
        try:
            order["customerId"] = _CUSTOMER_ID.run_validation(value)
        except serializers.ValidationError as exc:
            raise ValidationError(_first(exc.detail)[1], field="customerId") from None
    for name in ("billingAddress", "shippingAddress"):
        if body.get(name) is not None:
            order[name] = _object(AddressSerializer, body[name], name)
    value = body.get("shippingSameAsBilling")
    if value is not None:
        if not isinstance(value, bool):
            raise ValidationError("must be true or false", field="shippingSameAsBilling")
        order["shippingSameAsBilling"] = value
    items = body.get("lineItems")
    if items is not None:
        if not isinstance(items, list):
            raise ValidationError("must be a JSON array", field="lineItems")
        if len(items) > LINE_ITEMS_MAX:
            raise ValidationError(f"must have at most {LINE_ITEMS_MAX} items", field="lineItems")
        order["lineItems"] = [_object(LineItemSerializer, item, f"lineItems[{index}]")
                              for index, item in enumerate(items)]
    if body.get("orderSummary") is not None:
        order["orderSummary"] = _object(OrderSummarySerializer, body["orderSummary"], "orderSummary")
    return order


class OrderFieldsSchema(serializers.Serializer):
    """The order fields in the OpenAPI document of both creation requests (the checks are
    order_details_validate's; a nested DRF serializer would report a list error by position
    in a shape the envelope cannot name)."""

    customerId = StrictCharField(required=False, allow_null=True, max_length=CUSTOMER_ID_MAX,
                                 help_text="the merchant's id of the customer")
    billingAddress = AddressSerializer(required=False)
    shippingAddress = AddressSerializer(required=False)
    shippingSameAsBilling = serializers.BooleanField(required=False)
    lineItems = LineItemSerializer(many=True, required=False, max_length=LINE_ITEMS_MAX,
                                   help_text="at most 100; amounts in paise")
    orderSummary = OrderSummarySerializer(required=False, help_text="amounts in paise")
