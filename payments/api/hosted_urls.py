"""Hosted-checkout API routes. No trailing slash (the official SDK sends none), and a doubled
leading slash is tolerated: the SDK builds `base_url + path`, so a base_url ending in "/" asks
for //api/v2/..., which gunicorn passes through unchanged."""
from django.urls import re_path

from payments.api import hosted_views

urlpatterns = [
    re_path(r"^/?api/v2/payments$", hosted_views.HostedPaymentsView.as_view(), name="payments"),
    re_path(r"^/?api/v2/payments/enquiry$", hosted_views.PaymentEnquiryView.as_view(), name="payments-enquiry"),
]
