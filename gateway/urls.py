from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from gateway import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
         name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema", authentication_classes=[],
                                                     permission_classes=[]), name="api-docs"),
]

# Each app adds its own routes; an app without routes yet simply has no urls module.
for app in ("payments", "refunds", "tokens", "webhooks"):
    try:
        urlpatterns.append(path("", include(f"{app}.urls")))
    except ModuleNotFoundError as exc:
        if exc.name != f"{app}.urls":
            raise

handler404 = "gateway.views.not_found"
handler500 = "gateway.views.server_error"
