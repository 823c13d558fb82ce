"""The base of every merchant API view."""
from rest_framework.views import APIView


class GatewayAPIView(APIView):
    """Adds X-RateLimit-Limit / X-RateLimit-Remaining to every response whose merchant is known.

    Subclasses set `require_merchant_header = True` where the interface requires X-Merchant-Id.
    """

    require_merchant_header = False

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        rate = getattr(request._request, "rate_limit", None) or getattr(request, "rate_limit", None)
        if rate:
            response["X-RateLimit-Limit"] = str(rate[0])
            response["X-RateLimit-Remaining"] = str(rate[1])
        return response
