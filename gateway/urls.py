from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from gateway.console.claims import credential_claim
from gateway.platform import views
from gateway.platform.metrics import metrics_view

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    # Probes: liveness (touches nothing) and readiness (the balancer's check; the database only).
    path("livez", views.livez, name="livez"),
    path("readyz", views.readyz, name="readyz"),
    # Prometheus, closed to the public (gateway.platform.metrics says who may read it).
    path("metrics", metrics_view, name="metrics"),
    # APPEND_SLASH is off (API paths are exact); staff typing the console's address still get there.
    path("admin", RedirectView.as_view(url="/admin/", permanent=False)),
    # The console's own pages (dashboard, Needs attention, settlement export), before the admin's.
    path("admin/console/", include("gateway.console.urls")),
    path("admin/", admin.site.urls),
    # Where a merchant claims credentials staff made, with two administrators' codes (docs/security.md).
    path("credentials/claim/<str:claim_id>", credential_claim, name="credential-claim"),
    path("api/schema/", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
         name="schema"),
    # The split view serves its script from this address instead of inline: the CSP allows no
    # inline script, and Swagger UI itself comes from /static/ (drf-spectacular-sidecar).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema", authentication_classes=[],
                                                     permission_classes=[]), name="api-docs"),
]

# Each app adds its own routes.
urlpatterns += [
    path("", include("payments.urls")),
    path("", include("refunds.urls")),
    path("", include("tokens.urls")),
    path("", include("webhooks.urls")),
    # Every acquirer's notices (its webhooks), one door above payments and refunds.
    path("", include("gateway.inbound.urls")),
]

# Every error is the envelope, including the ones Django answers itself.
handler400 = "gateway.platform.views.bad_request"
handler403 = "gateway.platform.views.permission_denied"
handler404 = "gateway.platform.views.not_found"
handler500 = "gateway.platform.views.server_error"
