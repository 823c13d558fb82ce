"""Views of the platform itself: health, and the envelope handlers Django calls."""
import logging

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_safe

from gateway.errors import InternalError, NotFound, ServiceUnavailable, Unauthorized, ValidationError, \
    bad_request_error, error_response
from gateway.tracing import current_trace_id

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
    from gateway.celery import app

    try:
        with app.connection_for_write() as conn:
            # One quick attempt: a load balancer polls this, and must not wait on retries.
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0.2, timeout=2)
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
        {"success": False, "errorCode": error.code, "errorMessage": error.message,
         "traceId": current_trace_id(), "status": "unavailable", "checks": report},
        status=503,
    )


def bad_request(request, exception=None):
    return error_response(bad_request_error(exception))


def permission_denied(request, exception=None):
    return error_response(Unauthorized())


def not_found(request, exception=None):
    return error_response(NotFound())


def server_error(request):
    return error_response(InternalError())


def csrf_failure(request, reason=""):
    return error_response(ValidationError(
        "the form's security token is missing or stale; reload the page and try again",
        field="csrfmiddlewaretoken"))
