from django.urls import path

from payments.sandbox_upi import views

urlpatterns = [
    path("sandbox/upi", views.upi_page, name="sandbox-upi"),
    path("sandbox/upi/pay", views.SandboxUpiPayView.as_view(), name="sandbox-upi-pay"),
]
