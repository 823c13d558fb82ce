"""Routes of the payments app, one module per area so each can be read on its own."""
from django.urls import include, path

_AREAS = (
    "payments.api.hosted_urls",    # POST/GET /api/v2/payments, POST /api/v2/payments/enquiry
    "payments.api.s2s_urls",       # POST /api/v2/payments/s2s
    "payments.checkout.urls",      # the hosted checkout pages and the sandbox bank pages
    "payments.sandbox_upi.urls",   # the sandbox UPI app: /sandbox/upi, /sandbox/upi/pay
    "payments.api.token_urls",     # POST /api/v2/tokens: a token made from a payment (beta)
)


urlpatterns = [path("", include(module)) for module in _AREAS]
