"""gateway.urls plus /bench/bare: a plain Django view through the same middleware, the
yardstick of what this machine does for Django at all in the same run."""
from django.http import JsonResponse
from django.urls import path

from gateway import urls as gateway_urls


def bare(request):
    return JsonResponse({"ok": True})


urlpatterns = [path("bench/bare", bare), *gateway_urls.urlpatterns]

handler400 = gateway_urls.handler400
handler403 = gateway_urls.handler403
handler404 = gateway_urls.handler404
handler500 = gateway_urls.handler500
