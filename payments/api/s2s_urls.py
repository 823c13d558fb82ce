from django.urls import path

from payments.api.s2s_views import S2SPaymentCreateView

urlpatterns = [
    path("api/v2/payments/s2s", S2SPaymentCreateView.as_view(), name="s2s-payment-create"),
]
