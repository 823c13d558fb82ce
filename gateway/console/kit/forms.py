"""Form fields of the console that read what staff type as people write it, and refuse the rest
with an error that names the field (the admin shows it beside the field, and in the message
itself so that it reads alone)."""
from __future__ import annotations

from django import forms

from gateway.core.money import rupees_parse


class RupeesField(forms.DecimalField):
    """An amount of rupees as staff write it: 1000, 1,000, 1,00,000.50, ₹1,000 (gateway.core.money
    .rupees_parse). cleaned_data holds the Decimal rupees; the form converts to paise once."""

    def __init__(self, **kwargs):
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("widget", forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off"}))
        super().__init__(**kwargs)

    def to_python(self, value):
        if value in self.empty_values or not isinstance(value, str):
            return super().to_python(value)
        try:
            return rupees_parse(value)
        except ValueError as exc:
            raise forms.ValidationError(f"{self.label}: {exc}, not “{value.strip()[:40]}”.", code="invalid") from None
