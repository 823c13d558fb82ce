"""The console's own pages, under /admin/console/ (gateway/urls.py mounts them before the
admin's own addresses): inside the admin's sign-in and staff check (admin.site.admin_view),
each page checking its permission itself (gateway/console/views.py). Named console:<page>."""
from django.contrib import admin
from django.urls import path

from gateway.console import dispute_views, settlement_views, views

app_name = "console"

urlpatterns = [
    path("dashboard/", admin.site.admin_view(views.dashboard_view), name="dashboard"),
    path("needs-attention/", admin.site.admin_view(views.needs_attention_view), name="needs_attention"),
    path("settlement-export/", admin.site.admin_view(views.settlement_export_view), name="settlement_export"),
    # Finance's settlements and reconciliation (gateway/console/settlement_views.py).
    path("settlements/", admin.site.admin_view(settlement_views.settlements_view), name="settlements"),
    path("settlements/<int:pk>/", admin.site.admin_view(settlement_views.settlement_view), name="settlement"),
    path("settlements/<int:pk>/csv/", admin.site.admin_view(settlement_views.settlement_csv_view),
         name="settlement_csv"),
    path("reconciliation/exceptions/", admin.site.admin_view(settlement_views.exceptions_view),
         name="recon_exceptions"),
    path("reconciliation/exceptions/<int:pk>/", admin.site.admin_view(settlement_views.exception_view),
         name="recon_exception"),
    # Disputes: by time left, a dispute's page, finance's answers (gateway/console/dispute_views.py).
    path("disputes/", admin.site.admin_view(dispute_views.disputes_view), name="disputes"),
    path("disputes/<str:dispute_id>/", admin.site.admin_view(dispute_views.dispute_view), name="dispute"),
    path("disputes/<str:dispute_id>/accept", admin.site.admin_view(dispute_views.dispute_accept_view),
         name="dispute_accept"),
    path("disputes/<str:dispute_id>/evidence", admin.site.admin_view(dispute_views.dispute_evidence_view),
         name="dispute_evidence"),
    path("reconciliation/statements/upload/", admin.site.admin_view(settlement_views.statement_upload_view),
         name="statement_upload"),
]
