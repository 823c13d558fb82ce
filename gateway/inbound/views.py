"""POST /acquirer/<name>/webhooks: where an acquirer delivers its notices (the address to
register in its dashboard: docs/going-live.md for Cashfree).

Not an API of ours: no API key, no CSRF token (the acquirer signs instead), no DRF parsing,
since a signature is over the body's bytes exactly as received. Answers (the envelope on errors):

- 200 {"success": true, "status": ...} once a genuine delivery is recorded and applied, or was
  before (a duplicate). An acquirer retries anything else.
- 401 UNAUTHORIZED: no or a wrong signature. 400 REQUEST_EXPIRED: outside the acquirer's
  freshness window. 400 VALIDATION_ERROR: signed, but not a body it sends, or too large.
- 503 SERVICE_UNAVAILABLE: recorded but not yet applied (the acquirer could not be asked to
  confirm a failure, or applying it failed): the acquirer delivers it again and it is applied then.
- 404 NOT_FOUND for a name that is not the configured acquirer, 405 for other methods. Never a 500.
"""
from __future__ import annotations

import logging

from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

from gateway.core.errors import envelope
from gateway.inbound.pipeline import NoticeNotApplied, notice_receive
from payments.acquirer import configured_acquirer_named
from payments.acquirer.base import NoticeMalformed, NoticeNotFresh, NoticeRejected

logger = logging.getLogger("gateway.inbound")


@csrf_exempt
def acquirer_webhook(request, name: str):
    acquirer = configured_acquirer_named(name)
    if acquirer is None:
        return envelope("NOT_FOUND", "The requested resource does not exist.", 404)
    if request.method != "POST":
        return envelope("METHOD_NOT_ALLOWED", "This method is not allowed on this path.", 405,
                        headers={"Allow": "POST"})
    try:
        raw_body = request.body
    except RequestDataTooBig:
        return envelope("VALIDATION_ERROR", "body: the request body is too large", 400)
    try:
        outcome = notice_receive(acquirer=acquirer, headers=request.headers, raw_body=raw_body)
    except NoticeNotFresh as exc:
        logger.warning("%s webhook refused: %s", name, exc)
        return envelope("REQUEST_EXPIRED", f"timestamp: {exc}", 400)
    except NoticeMalformed as exc:
        logger.warning("%s webhook refused: %s", name, exc)
        return envelope("VALIDATION_ERROR", f"body: {exc}", 400)
    except NoticeRejected as exc:
        logger.warning("%s webhook refused: %s", name, exc)
        return envelope("UNAUTHORIZED", f"signature: {exc}", 401)
    except NoticeNotApplied as exc:
        logger.warning("%s webhook recorded, not applied: %s", name, exc)
        return envelope("SERVICE_UNAVAILABLE", "recorded; deliver it again later", 503)
    except Exception:  # noqa: BLE001 - the notice is recorded (RECEIVED); the acquirer's retry applies it
        logger.exception("%s webhook: applying a recorded notice failed", name)
        return envelope("SERVICE_UNAVAILABLE", "recorded; deliver it again later", 503)
    notice = outcome.notice
    return JsonResponse({"success": True, "notice": notice.pk, "status": notice.status,
                         "duplicate": outcome.duplicate})
