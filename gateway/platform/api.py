"""The base of every merchant API view."""
import threading
from collections.abc import Mapping
from functools import cached_property

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import SkipField, empty, get_error_detail
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.views import APIView

from gateway.core.errors import ValidationError
from gateway.platform.models import Merchant


class JsonOnlyNegotiation(DefaultContentNegotiation):
    """The API only speaks JSON: answer JSON whatever Accept says, rather than refusing a
    client whose HTTP library sends `Accept: text/html` or `application/xml`."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class GatewayAPIView(APIView):
    """Adds X-RateLimit-Limit / X-RateLimit-Remaining to every response whose merchant is known,
    and refuses a body that is JSON but not an object (VALIDATION_ERROR naming `body`).

    Subclasses set `require_merchant_header = True` where the interface requires X-Merchant-Id.
    Checks run in this order: X-Merchant-Id presence, X-Api-Key, rate limit, body shape; so an
    unauthenticated caller always gets UNAUTHORIZED, whatever else is wrong with its request.
    """

    require_merchant_header = False
    content_negotiation_class = JsonOnlyNegotiation

    @property
    def merchant(self) -> Merchant:
        """The authenticated merchant (the key's)."""
        return self.request.user

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        has_handler = hasattr(self, request.method.lower())
        if has_handler and request.method in ("POST", "PUT", "PATCH") and not isinstance(request.data, dict):
            raise ValidationError("must be a JSON object", field="body")

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        rate = getattr(request._request, "rate_limit", None) or getattr(request, "rate_limit", None)
        if rate:
            response["X-RateLimit-Limit"] = str(rate[0])
            response["X-RateLimit-Remaining"] = str(rate[1])
        return response


_bound_serializers: dict = {}
_bound_lock = threading.Lock()


def validated(serializer_class, data) -> dict:
    """`serializer_class(data=data)`'s validated_data after is_valid(raise_exception=True),
    raising the same ValidationError, without building the serializer's fields again for each
    request. DRF deep-copies every declared field into every new serializer instance, which
    cost the creation endpoints (33 fields with udf1..udf20) about a millisecond of CPU a
    request. Here one instance per class is bound once and reused: validation keeps no state
    on the serializer, so use it only for plain request serializers without context."""
    serializer = _bound_serializers.get(serializer_class)
    if serializer is None:
        with _bound_lock:
            serializer = _bound_serializers.get(serializer_class)
            if serializer is None:
                serializer = serializer_class()
                serializer.fields  # noqa: B018 - bind every field now, once
                _bound_serializers[serializer_class] = serializer
    return serializer.run_validation(data)


class RequestSerializer(serializers.Serializer):
    """A request serializer that passes over an optional field the body leaves out without
    asking the field. DRF's own loop asks every field, and an absent optional one answers by
    raising SkipField: on the creation endpoints, whose twenty udf fields are usually absent,
    that was a third of field validation. The result is DRF's: the same values, the same
    errors in the same order (tests/gateway/test_api_serializers.py holds the two equal).
    For JSON bodies of plain fields (no partial updates, no HTML forms, no nested sources)."""

    @cached_property
    def _validation_plan(self) -> list:
        """Per writable field: the field, its name, its validate_<name> method or None, and
        whether it may be left out (not required, no default)."""
        return [(field, field.field_name, getattr(self, "validate_" + field.field_name, None),
                 not field.required and field.default is empty)
                for field in self._writable_fields]

    def to_internal_value(self, data):
        if not isinstance(data, Mapping):
            return super().to_internal_value(data)  # DRF's error for a body that is not an object
        values, errors = {}, {}
        for field, name, validate_method, optional in self._validation_plan:
            if optional and name not in data:
                continue  # DRF: get_value gives `empty`, get_default raises SkipField
            try:
                value = field.run_validation(field.get_value(data))
                if validate_method is not None:
                    value = validate_method(value)
            except serializers.ValidationError as exc:
                errors[name] = exc.detail
            except DjangoValidationError as exc:
                errors[name] = get_error_detail(exc)
            except SkipField:
                pass
            else:
                self.set_value(values, field.source_attrs, value)
        if errors:
            raise serializers.ValidationError(errors)
        return values
