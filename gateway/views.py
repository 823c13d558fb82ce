"""Views of the platform itself: health, and the envelope handlers Django calls."""
import logging

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from gateway.errors import InternalError, NotFound, ValidationError, error_response

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
            conn.ensure_connection(max_retries=1, timeout=2)
        return True
    except Exception:
        logger.exception("health check: broker unreachable")
        return False


@require_GET
def healthz(request):
    checks = {"database": _database_ok(), "broker": _broker_ok()}
    healthy = all(checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": {k: "ok" if v else "down" for k, v in checks.items()}},
        status=200 if healthy else 503,
    )


def not_found(request, exception=None):
    return error_response(NotFound())


def server_error(request):
    return error_response(InternalError())


def csrf_failure(request, reason=""):
    return error_response(ValidationError(
        "the form's security token is missing or stale; reload the page and try again",
        field="csrfmiddlewaretoken"))
