"""POST /acquirer/cashfree/webhooks: where Cashfree delivers its payment and refund webhooks
(the address to register in Cashfree's dashboard, docs/going-live.md).

Not an API of ours: no API key, no CSRF token (Cashfree signs instead), no DRF parsing, since
the signature is over the body's bytes exactly as received. Answers (the envelope on errors):

- 200 {"success": true, "status": ...} once a genuine delivery is recorded and applied, or was
  before (a duplicate). Cashfree retries anything else.
- 401 UNAUTHORIZED: no or a wrong signature. 400 REQUEST_EXPIRED: older than five minutes (or
  too far ahead). 400 VALIDATION_ERROR: signed, but not a JSON object, or too large.
- 503 SERVICE_UNAVAILABLE: recorded but not yet applied (Cashfree could not be asked to
  confirm a failure, or applying it failed): Cashfree delivers it again and it is applied then.
- 404 NOT_FOUND where Cashfree is not the acquirer, 405 for other methods. Never a 500.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

from gateway.core.errors import envelope

from payments.acquirer.cashfree.webhooks import WebhookMalformed, WebhookNotFresh, WebhookVerificationError
from payments.notices.cashfree import ACQUIRER, NoticeNotApplied, notice_receive

logger = logging.getLogger("payments.acquirer.cashfree")


@csrf_exempt
def cashfree_webhook(request):
    if getattr(settings, "GATEWAY_ACQUIRER", "") != ACQUIRER:
        return envelope("NOT_FOUND", "The requested resource does not exist.", 404)
    if request.method != "POST":
        return envelope("METHOD_NOT_ALLOWED", "This method is not allowed on this path.", 405,
                        headers={"Allow": "POST"})
    try:
        raw_body = request.body
    except RequestDataTooBig:
        return envelope("VALIDATION_ERROR", "body: the request body is too large", 400)
    try:
        outcome = notice_receive(headers=request.headers, raw_body=raw_body)
    except WebhookNotFresh as exc:
        logger.warning("cashfree webhook refused: %s", exc)
        return envelope("REQUEST_EXPIRED", f"x-webhook-timestamp: {exc}", 400)
    except WebhookMalformed as exc:
        logger.warning("cashfree webhook refused: %s", exc)
        return envelope("VALIDATION_ERROR", f"body: {exc}", 400)
    except WebhookVerificationError as exc:
        logger.warning("cashfree webhook refused: %s", exc)
        return envelope("UNAUTHORIZED", f"x-webhook-signature: {exc}", 401)
    except NoticeNotApplied as exc:
        logger.warning("cashfree webhook recorded, not applied: %s", exc)
        return envelope("SERVICE_UNAVAILABLE", "recorded; deliver it again later", 503)
    except Exception:  # noqa: BLE001 - the notice is recorded (RECEIVED); Cashfree's retry applies it
        logger.exception("cashfree webhook: applying a recorded notice failed")
        return envelope("SERVICE_UNAVAILABLE", "recorded; deliver it again later", 503)
    notice = outcome.notice
    return JsonResponse({"success": True, "notice": notice.pk, "status": notice.status,
                         "duplicate": outcome.duplicate})
