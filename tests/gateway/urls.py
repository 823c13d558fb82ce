"""A test-only URLconf: small GatewayAPIView subclasses that exercise the request plumbing
(authentication, merchant checks, signing, validation, crashes) before any payment endpoint
exists. Used with @pytest.mark.urls("tests.gateway.urls")."""
from django.urls import path
from rest_framework import serializers
from rest_framework.response import Response

from gateway.platform.api import GatewayAPIView
from gateway.platform.auth import ensure_same_merchant
from gateway.core.signing import verify_signed_request
from gateway.urls import handler400, handler403, handler404, handler500  # noqa: F401
from gateway.urls import urlpatterns as gateway_urlpatterns


class Whoami(GatewayAPIView):
    """GET: the authenticated merchant; a merchantId query parameter must name it."""

    def get(self, request):
        if "merchantId" in request.query_params:
            ensure_same_merchant(request.user, request.query_params["merchantId"])
        return Response({"merchantId": request.user.code})


class MerchantHeaderRequired(GatewayAPIView):
    require_merchant_header = True

    def get(self, request):
        return Response({"merchantId": request.user.code})


class AsSent(serializers.Field):
    """A value passed through untouched, for a check that owns all of its rules."""

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return value


class SignedRequestSerializer(serializers.Serializer):
    merchantId = serializers.CharField(max_length=50)
    merchantTxnId = serializers.CharField(max_length=50)
    amount = serializers.IntegerField(min_value=1)
    currency = serializers.ChoiceField(choices=["INR"])
    # Passed through as sent: verify_timestamp owns every timestamp rule.
    timestamp = AsSent(required=False)
    checksum = serializers.CharField()


class SignedCreate(GatewayAPIView):
    """POST: a payment-creation-shaped body, checked the way payment creation checks it."""

    def post(self, request):
        serializer = SignedRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        ensure_same_merchant(request.user, data["merchantId"])
        timestamp = verify_signed_request(
            request.user.secret_key, checksum=data["checksum"], timestamp=data.get("timestamp"),
            fields=(data["merchantId"], data["merchantTxnId"], data["amount"], data["currency"]))
        return Response({"success": True, "merchantTxnId": data["merchantTxnId"], "timestamp": timestamp})


class Boom(GatewayAPIView):
    def get(self, request):
        raise RuntimeError("boom: an unexpected failure deep inside a view")


urlpatterns = [
    path("t/whoami", Whoami.as_view()),
    path("t/merchant-header", MerchantHeaderRequired.as_view()),
    path("t/signed", SignedCreate.as_view()),
    path("t/boom", Boom.as_view()),
    *gateway_urlpatterns,
]
