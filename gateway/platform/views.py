"""Views of the platform itself: health (/healthz, and the /livez and /readyz probes), and the error handlers Django calls.

Errors are the JSON envelope everywhere except in the admin console, where a person reads
them: there a refused permission or a stale form is an HTML 403 page, and a missing page an
HTML 404, in the console's look.
"""
import logging

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_safe

from gateway.core.errors import InternalError, NotFound, ServiceUnavailable, Unauthorized, ValidationError, \
    bad_request_error, envelope_body, error_response

logger = logging.getLogger("gateway.health")


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:
        logger.exception("health check: database unreachable")
        return False


def _broker_ok() -> bool:
    from celery import current_app as app  # the project's app (gateway.celery), without importing the wiring

    timeout = settings.REDIS_TIMEOUT_SECONDS
    try:
        # One quick attempt, bounded as a request's own use of Redis is (gateway.core.redisguard):
        # a load balancer polls this, and must not wait on retries or on a hung Redis.
        with app.connection_for_write(connect_timeout=timeout, transport_options={
                "socket_timeout": timeout, "socket_connect_timeout": timeout}) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0.2, timeout=2 * timeout)
            client = getattr(conn.default_channel, "client", None)
            if client is not None:  # Redis: the connection may be open while Redis is hung
                client.ping()
        return True
    except Exception:
        logger.exception("health check: broker unreachable")
        return False


@require_safe
def healthz(request):
    checks = {"database": _database_ok(), "broker": _broker_ok()}
    report = {k: "ok" if v else "down" for k, v in checks.items()}
    if all(checks.values()):
        return JsonResponse({"status": "ok", "checks": report})
    # An error response, so it is the envelope too; the checks say what is down.
    error = ServiceUnavailable("a dependency of the service is unreachable: "
                               + ", ".join(k for k, v in checks.items() if not v))
    return JsonResponse(
        {**envelope_body(error.code, error.message), "status": "unavailable", "checks": report},
        status=503,
    )


@require_safe
def livez(request):
    """Liveness: the process answers HTTP. It touches neither the database nor the broker, so a
    supervisor restarts a wedged process, never a healthy one whose dependencies are away."""
    return JsonResponse({"status": "ok"})


@require_safe
def readyz(request):
    """Readiness, what the balancer routes by (deploy/haproxy/haproxy.cfg): can this node serve
    a request? That needs the database. It does not ask the broker: a request survives a broker
    outage (publishing is bounded and never raises, gateway/core/broker.py; rate limits fail open,
    gateway/core/redisguard.py; the beat sweeps catch up), and every node shares the one broker,
    so asking it would take every node out of the pool at once for a blip that costs nothing.
    /healthz keeps asking both, for a person or a monitor."""
    if _database_ok():
        return JsonResponse({"status": "ok", "checks": {"database": "ok"}})
    error = ServiceUnavailable("the database is unreachable")
    return JsonResponse({**envelope_body(error.code, error.message), "status": "unavailable",
                         "checks": {"database": "down"}}, status=503)


def bad_request(request, exception=None):
    return error_response(bad_request_error(exception))


def is_console(request) -> bool:
    try:
        return request.path.startswith(reverse("admin:index"))
    except NoReverseMatch:  # a URLconf without the admin
        return False


def _console_page(request, template: str, status: int, **context):
    """An error page in the console's look (the admin's header, breadcrumbs and styles)."""
    from django.contrib import admin

    return TemplateResponse(request, template, {**admin.site.each_context(request), **context},
                            status=status).render()


def _console_forbidden(request, message: str):
    from gateway.platform.roles import user_roles

    return _console_page(request, "admin/403.html", 403, title="Permission needed", message=message,
                         roles=user_roles(request.user))


def permission_denied(request, exception=None):
    if is_console(request):
        message = str(exception or "") or "Your account does not have the permission this page or action needs."
        return _console_forbidden(request, message)
    return error_response(Unauthorized())


def not_found(request, exception=None):
    if is_console(request):
        return _console_not_found(request)
    from gateway.core.customer_pages import customer_error_page

    return customer_error_page(request, NotFound()) or error_response(NotFound())


def _console_not_found(request):
    """The console's own 404 page, for a person who followed an old or mistyped link."""
    return _console_page(request, "admin/404.html", 404, title="Page not found", path=request.path)


def console_too_large(request, length: int):
    """The console's answer to a body over CONSOLE_MAX_BODY_BYTES (413), as a page in its look."""
    from gateway.platform.brand import LOGO_MAX_BYTES

    return _console_page(request, "admin/413.html", 413, title="Upload too large",
                         size_kb=-(-length // 1024), limit_kb=settings.CONSOLE_MAX_BODY_BYTES // 1024,
                         logo_kb=LOGO_MAX_BYTES // 1024)


def server_error(request):
    from gateway.core.customer_pages import customer_error_page

    return customer_error_page(request, InternalError()) or error_response(InternalError())


def csrf_failure(request, reason=""):
    if is_console(request):
        return _console_forbidden(request, "The form's security token is missing or stale (the page was open "
                                           "too long, or you signed in again elsewhere). Go back, reload the "
                                           "page and submit it again.")
    from gateway.core.customer_pages import customer_error_page

    error = ValidationError("the form's security token is missing or stale; reload the page and try again",
                            field="csrfmiddlewaretoken")
    return customer_error_page(request, error) or error_response(error)
