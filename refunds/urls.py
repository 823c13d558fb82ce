"""Routes of the refunds app: exact paths, no trailing slash (the official SDK sends none)."""
from django.urls import path

from refunds.api.settlement_views import SettlementDetailView, SettlementsView
from refunds.api.views import RefundDetailView, RefundsView

urlpatterns = [
    path("api/v2/refunds", RefundsView.as_view(), name="refunds"),
    path("api/v2/refunds/<str:refundId>", RefundDetailView.as_view(), name="refund-detail"),
    path("api/v2/settlements", SettlementsView.as_view(), name="settlements"),
    path("api/v2/settlements/<str:settlementId>", SettlementDetailView.as_view(), name="settlement-detail"),
]
