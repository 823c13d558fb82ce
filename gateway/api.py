"""The base of every merchant API view."""
import threading

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.views import APIView

from gateway.errors import ValidationError
from gateway.models import Merchant


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
