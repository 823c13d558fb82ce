"""The console's own pages, under /admin/console/ (gateway/urls.py mounts them before the
admin's own addresses): inside the admin's sign-in and staff check (admin.site.admin_view),
each page checking its permission itself (gateway/console/views.py). Named console:<page>."""
from django.contrib import admin
from django.urls import path

from gateway.console import views

app_name = "console"

urlpatterns = [
    path("dashboard/", admin.site.admin_view(views.dashboard_view), name="dashboard"),
    path("needs-attention/", admin.site.admin_view(views.needs_attention_view), name="needs_attention"),
    path("settlement-export/", admin.site.admin_view(views.settlement_export_view), name="settlement_export"),
]
