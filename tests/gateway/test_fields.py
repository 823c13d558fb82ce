"""gateway.core.fields: the strict fields every API's request serializers are built from."""
import pytest
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from gateway.core.fields import StrictCharField, StrictIntegerField, StrictIntegerSchema, is_unicode
from payments.api.hosted_serializers import PaiseField as HostedPaiseField
from payments.api.s2s_serializers import StrictInteger, StrictString
from refunds.api.serializers import PaiseField as RefundPaiseField


def error(field, data) -> str:
    with pytest.raises(serializers.ValidationError) as caught:
        field.run_validation(data)
    return str(caught.value.detail[0])


@pytest.mark.parametrize("data", [1, 1.5, True, ["a"], {"a": "b"}])
def test_a_strict_char_field_refuses_anything_but_a_string(data):
    assert error(StrictCharField(), data) == "must be a string"


def test_a_strict_char_field_never_trims():
    assert StrictCharField().run_validation("  a  ") == "  a  "


@pytest.mark.parametrize("text", ["a\tb", "a\nb", "a\rb", "a\x0bb", "a\x7fb"])
def test_a_strict_char_field_refuses_every_control_character(text):
    assert error(StrictCharField(), text) == "must not contain control characters"


@pytest.mark.parametrize("text", ["a\tb", "a\nb", "a\r\nb"])
def test_free_text_may_carry_tabs_and_line_breaks(text):
    assert StrictCharField(allow_line_breaks=True).run_validation(text) == text


@pytest.mark.parametrize("text", ["a\x0bb", "a\x0cb", "a\x1bb", "a\x7fb"])
def test_free_text_still_refuses_other_control_characters(text):
    assert error(StrictCharField(allow_line_breaks=True), text) == "must not contain control characters"


@pytest.mark.parametrize("field", [StrictCharField(), StrictCharField(allow_line_breaks=True)])
def test_a_strict_char_field_refuses_nul_and_lone_surrogates(field):
    assert error(field, "a\x00b") == "must not contain control characters"
    assert error(field, "a\ud800b") == error(field, "\udfff") == "must not contain surrogate characters"
    assert field.run_validation("रुपया ✓ 😀") == "रुपया ✓ 😀"


def test_a_lone_surrogate_is_not_unicode():
    assert is_unicode("रुपया ✓") and not is_unicode("a\ud800")


@pytest.mark.parametrize("data", ["100", 100.0, True, False])
def test_a_strict_integer_field_refuses_anything_but_an_integer(data):
    assert error(StrictIntegerField(low=1, high=10), data) == "must be an integer"


def test_a_strict_integer_field_names_its_bounds():
    field = StrictIntegerField(low=1, high=10)
    assert field.run_validation(1) == 1 and field.run_validation(10) == 10
    assert error(field, 0) == error(field, 11) == "must be between 1 and 10"


def test_a_strict_integer_field_without_high_has_no_upper_bound():
    assert StrictIntegerField(low=1).run_validation(10**15) == 10**15


def test_each_api_keeps_its_own_words():
    assert error(HostedPaiseField(), "100") == "must be an integer number of paise"
    assert error(HostedPaiseField(), 99) == "must be between 100 and 100000000 paise"
    assert error(RefundPaiseField(), 0) == "must be greater than 0 paise"
    assert error(StrictInteger(low=1, high=60), 61) == "must be between 1 and 60"
    assert error(StrictInteger(low=1, high=60), None) == "must not be null"
    assert error(StrictString(), 5) == "must be a string"
    assert error(StrictString(), "") == "must not be empty"


def test_the_integer_schema_extension_is_registered_once_for_the_shared_field():
    registered = [e for e in OpenApiSerializerFieldExtension._registry if e.__name__ == "StrictIntegerSchema"]
    assert registered == [StrictIntegerSchema]
    assert StrictIntegerSchema.target_class is StrictIntegerField


def test_the_api_document_gives_every_strict_integer_its_bounds():
    schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    integer = {"type": "integer", "format": "int64"}
    assert schemas["HostedPaymentRequestSchemaRequest"]["properties"]["amount"] == {
        **integer, "minimum": 100, "maximum": 100_000_000}
    assert schemas["RefundCreateRequest"]["properties"]["refundAmount"] == {**integer, "minimum": 1}
    s2s = schemas["S2SPaymentRequestRequest"]["properties"]
    assert s2s["upiExpiryMinutes"] == {**integer, "minimum": 1, "maximum": 60, "nullable": True}
