"""Strict DRF fields shared by the request serializers of every merchant API.

Strict means JSON types are never converted: a number where a string belongs, or a string,
float or boolean where an integer belongs, is a VALIDATION_ERROR naming the field. Strings are
never trimmed, so what the merchant signed is what is stored. Each API keeps its own wording by
subclassing with its own `default_error_messages`; the checks, and their order, live here.
"""
from __future__ import annotations

import re

from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Free text may keep tab, line feed and carriage return.
CONTROL_BUT_WHITESPACE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
# The same rules as patterns for the OpenAPI document (no control characters; free text may
# keep tab, line feed and carriage return), so that what it allows is what the fields take.
NO_CONTROL_PATTERN = r"^[^\x00-\x1f\x7f]*$"
NO_CONTROL_BUT_WHITESPACE_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"
# An absolute http(s) address Django's URLValidator takes, as a pattern for the document: a
# host of up to four lower-case labels ending in a letters-only top-level domain, an optional
# port, then printable ASCII (the validator takes more; this is what the document promises).
WEB_ADDRESS_PATTERN = (r"^https?://([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.){1,3}[a-z]{2,24}"
                       r"(:[1-9][0-9]{0,3})?(/[!-~]*)?$")
# Text that is not only spaces: a character that is neither space nor control among them
# (free text, which may keep tab and line breaks; a line, which may not).
NOT_BLANK_TEXT = (r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*[^\s\x00-\x1f\x7f]"
                  r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$")
NOT_BLANK_LINE = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"


def is_unicode(value: str) -> bool:
    """False for a lone surrogate (JSON's "\\ud800"), which no database text column can store."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class StrictCharField(serializers.CharField):
    """A CharField that accepts only JSON strings and never trims. Control characters are
    refused; free text (`allow_line_breaks`) may carry tabs and line breaks."""

    default_error_messages = {"invalid": "must be a string", "control": "must not contain control characters",
                              "surrogate": "must not contain surrogate characters"}

    def __init__(self, *, allow_line_breaks: bool = False, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        self.allow_line_breaks = allow_line_breaks
        self.control = CONTROL_BUT_WHITESPACE if allow_line_breaks else CONTROL
        super().__init__(**kwargs)
        # DRF's NUL and surrogate validators walk the string a character at a time in Python
        # (a tenth of S2S validation); the control check already refuses NUL, and is_unicode
        # (one encode, in C) refuses lone surrogates.
        self.validators = [v for v in self.validators
                           if not isinstance(v, (ProhibitNullCharactersValidator, ProhibitSurrogateCharactersValidator))]

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if self.control.search(data):
            self.fail("control")
        if not is_unicode(data):
            self.fail("surrogate")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.Field):
    """Only a JSON integer (not a string, a float or a boolean), from `low` to `high`; no upper
    bound when `high` is None."""

    default_error_messages = {"invalid": "must be an integer", "range": "must be between {low} and {high}"}

    def __init__(self, *, low: int, high: int | None = None, **kwargs):
        self.low, self.high = low, high
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        if data < self.low or (self.high is not None and data > self.high):
            self.fail("range", low=self.low, high=self.high)
        return data

    def to_representation(self, value):
        return value


class StrictIntegerSchema(OpenApiSerializerFieldExtension):
    """A StrictIntegerField (or subclass) in the OpenAPI document: a 64-bit integer with its
    bounds, read from the attributes that validate, so the document cannot drift from the checks."""

    target_class = StrictIntegerField
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = {"type": "integer", "format": "int64", "minimum": self.target.low}
        if self.target.high is not None:
            schema["maximum"] = self.target.high
        return schema


def strict_string_schema(field: StrictCharField) -> dict:
    """A StrictCharField in the OpenAPI document: a string without control characters (free
    text: but tab and line breaks), at least one character unless blank is allowed. Lengths and
    a RegexValidator's pattern (which then replaces this one: each is stricter) are added by
    drf-spectacular from the field's validators."""
    schema = {"type": "string",
              "pattern": NO_CONTROL_BUT_WHITESPACE_PATTERN if field.allow_line_breaks else NO_CONTROL_PATTERN}
    for validator in field.validators:
        # A field's own pattern is stricter (and refuses control characters too).
        if isinstance(validator, RegexValidator) and not validator.inverse_match:
            schema["pattern"] = validator.regex.pattern.replace("\\Z", "$")
    if not field.allow_blank:
        schema["minLength"] = max(1, field.min_length or 0)
    return schema


class StrictCharSchema(OpenApiSerializerFieldExtension):
    """StrictCharField (and subclasses without an extension of their own) in the document."""

    target_class = StrictCharField
    match_subclasses = True
    priority = -1  # a subclass's own extension (payments.api.s2s_serializers.StrictStringSchema) wins

    def map_serializer_field(self, auto_schema, direction):
        return strict_string_schema(self.target)
