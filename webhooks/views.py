"""The webhook inbox's address (webhooks/inbox.py): POST receives a webhook, GET shows what
arrived. Staging only: SandboxGateMiddleware answers 404 to every /sandbox/ path in production,
and the view checks again so that it cannot be mounted elsewhere by mistake."""
from __future__ import annotations

import json

from django.conf import settings
from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from gateway.core.errors import MethodNotAllowed, NotFound, envelope, error_response
from gateway.core.tracing import current_trace_id
from webhooks.inbox import TOLERANCE_MS, inbox_receive, inbox_url
from webhooks.models import WebhookInbox

# Deliveries per page: the bodies are folded, so ten fit a laptop's screen or two.
PAGE_SIZE = 10


def _pretty(body: str) -> str:
    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except ValueError:
        return body


@csrf_exempt  # the gateway's worker posts here, as to any merchant's receiver
def inbox(request, token: str):
    if settings.IS_PRODUCTION:
        return error_response(NotFound())
    found = WebhookInbox.objects.select_related("merchant").filter(token=token).first()
    if found is None:
        return error_response(NotFound())
    if request.method == "POST":
        received = inbox_receive(inbox=found, headers=dict(request.headers), body=request.body)
        if not received.verified:
            # As a merchant's receiver should answer (docs/examples/webhook_receiver.py): the
            # delivery is then retried, and the console's delivery log shows the failure.
            return envelope("INVALID_SIGNATURE", received.reason, 401)
        return JsonResponse({"success": True, "received": received.message.event_id, "verified": True,
                             "traceId": current_trace_id()})
    if request.method not in ("GET", "HEAD"):
        return error_response(MethodNotAllowed())
    page = Paginator(found.messages.all(), PAGE_SIZE).get_page(request.GET.get("page"))
    for message in page.object_list:
        message.pretty_body = _pretty(message.body)
        message.header_list = sorted(message.headers.items())
    return render(request, "sandbox/webhook_inbox.html", {
        "merchant": found.merchant, "inbox": found, "address": inbox_url(found), "page": page,
        "tolerance_seconds": TOLERANCE_MS // 1000,
    })
