"""Routes of the refunds app: exact paths, no trailing slash (the official SDK sends none)."""
from django.urls import path

from refunds.api.dispute_views import DisputeAcceptView, DisputeDetailView, DisputeEvidenceView, DisputesView
from refunds.api.settlement_views import SettlementDetailView, SettlementsView
from refunds.api.views import RefundDetailView, RefundsView

urlpatterns = [
    path("api/v2/refunds", RefundsView.as_view(), name="refunds"),
    path("api/v2/refunds/<str:refundId>", RefundDetailView.as_view(), name="refund-detail"),
    path("api/v2/disputes", DisputesView.as_view(), name="disputes"),
    path("api/v2/disputes/<str:disputeId>", DisputeDetailView.as_view(), name="dispute-detail"),
    path("api/v2/disputes/<str:disputeId>/accept", DisputeAcceptView.as_view(), name="dispute-accept"),
    path("api/v2/disputes/<str:disputeId>/evidence", DisputeEvidenceView.as_view(), name="dispute-evidence"),
    path("api/v2/settlements", SettlementsView.as_view(), name="settlements"),
    path("api/v2/settlements/<str:settlementId>", SettlementDetailView.as_view(), name="settlement-detail"),
]
