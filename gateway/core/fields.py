"""Strict DRF fields shared by the request serializers of every merchant API.

Strict means JSON types are never converted: a number where a string belongs, or a string,
float or boolean where an integer belongs, is a VALIDATION_ERROR naming the field. Strings are
never trimmed, so what the merchant signed is what is stored. Each API keeps its own wording by
subclassing with its own `default_error_messages`; the checks, and their order, live here.
"""
from __future__ import annotations

import re

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Free text may keep tab, line feed and carriage return.
CONTROL_BUT_WHITESPACE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


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
