"""GET /metrics for Prometheus, closed to the public, and the request-latency middleware.

Who may read it (docs/operations.md, "Metrics"): a request that carries
`Authorization: Bearer <METRICS_TOKEN>` when that setting is set, or one that comes straight
from an address in METRICS_ALLOWED_IPS (loopback by default). A request that came through a
proxy (it carries X-Forwarded-For) is judged by the token alone: behind the balancer the peer
address is the balancer's own, and it must not open the page to the internet. Anyone else gets
the ordinary 404 envelope, as for an address that does not exist.

Under gunicorn the page adds up every worker's values (prometheus_client's multiprocess mode,
PROMETHEUS_MULTIPROC_DIR, set by gunicorn.conf.py); elsewhere it shows this process's.
"""
from __future__ import annotations

import hmac
import ipaddress
import os
import time

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpResponse
from prometheus_client import REGISTRY, CollectorRegistry, multiprocess
from prometheus_client.exposition import choose_encoder

from gateway.core import metrics
from gateway.platform.views import not_found


def metrics_allowed(request) -> bool:
    token = settings.METRICS_TOKEN
    if token:
        scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return True
    if "HTTP_X_FORWARDED_FOR" in request.META:
        return False
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(peer in network for network in settings.METRICS_ALLOWED_IPS)


def metrics_registry():
    """The registry to expose: every process's values when the multiprocess folder is set."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


def metrics_view(request):
    if request.method not in ("GET", "HEAD") or not metrics_allowed(request):
        return not_found(request)
    # The format the scraper asks for (Prometheus's Accept header: OpenMetrics or the classic text).
    encode, content_type = choose_encoder(request.META.get("HTTP_ACCEPT", ""))
    return HttpResponse(encode(metrics_registry()), content_type=content_type)


class RequestMetricsMiddleware:
    """Times every request and labels it with the route's name (the resolved URL pattern, never
    the raw path, so an id in the address adds no series); counts database errors that reach it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.view_name or match.route) if match is not None else "unmatched"
        metrics.http_request_duration.labels(route, request.method if request.method in _METHODS else "other",
                                             f"{response.status_code // 100}xx").observe(time.perf_counter() - started)
        return response

    def process_exception(self, request, exception):
        if isinstance(exception, DatabaseError):
            metrics.database_errors.labels(type(exception).__name__).inc()
        return None


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
