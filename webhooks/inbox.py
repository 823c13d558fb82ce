"""The webhook inbox (staging only): an address of the gateway itself that receives a
merchant's webhooks, checks each signature with that merchant's webhook secret as a merchant's
receiver would (docs/webhooks.md), and keeps the deliveries that verified for the inbox page;
of the POSTs it refused it keeps only their number and the latest reason.

It lets a developer see a signed webhook arrive before writing a receiver. Its address is
`<GATEWAY_PUBLIC_URL>/sandbox/webhooks/<token>`: like every /sandbox/ path it answers 404 in
production (gateway.platform.middleware.SandboxGateMiddleware), and the token keeps one merchant's
deliveries out of another's sight.
"""
from __future__ import annotations

import hmac
import json
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from gateway.core.errors import ValidationError
from gateway.platform.models import Merchant
from gateway.platform.services import merchant_set_webhook_url
from gateway.core.signing import webhook_signature
from webhooks.models import WebhookInbox, WebhookInboxMessage

# The tolerance docs/examples/webhook_receiver.py applies, so the inbox judges as it does.
TOLERANCE_MS = 300_000
# Headers a browser or proxy may add that say nothing about the webhook and may be private.
_HIDDEN_HEADERS = {"cookie", "authorization", "proxy-authorization"}


def inbox_path(inbox: WebhookInbox) -> str:
    return f"/sandbox/webhooks/{inbox.token}"


def inbox_url(inbox: WebhookInbox) -> str:
    return settings.GATEWAY_PUBLIC_URL + inbox_path(inbox)


def inbox_for_merchant(merchant: Merchant) -> WebhookInbox:
    """The merchant's inbox, made the first time it is asked for. Raises ValidationError in
    production, where the inbox does not exist."""
    if settings.IS_PRODUCTION:
        raise ValidationError("the webhook inbox exists only in staging", field="webhookUrl")
    inbox, _ = WebhookInbox.objects.get_or_create(merchant=merchant)
    return inbox


def merchant_point_to_inbox(*, merchant: Merchant, actor=None) -> str:
    """Send the merchant's webhooks to its inbox, audited like any change of address.
    Returns the inbox address."""
    with transaction.atomic():
        url = inbox_url(inbox_for_merchant(merchant))
        merchant_set_webhook_url(merchant=merchant, url=url, actor=actor)
    return url


def signature_check(secret: str, header: str | None, body: bytes, *, now_ms: int | None = None) -> tuple[bool, str]:
    """(verified, why) for an X-Service-Signature header, `<timestamp ms>.<base64 HMAC-SHA256
    of "<timestamp ms>.<raw body>">`, checked as docs/webhooks.md tells a merchant to."""
    if not header:
        return False, "no X-Service-Signature header"
    timestamp, _, signature = header.partition(".")
    if not timestamp.isdigit() or not signature:
        return False, "malformed X-Service-Signature: expected <timestamp in ms>.<base64 signature>"
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    skew_ms = now_ms - int(timestamp)
    if abs(skew_ms) > TOLERANCE_MS:
        return False, (f"timestamp is {abs(skew_ms) // 1000} s {'old' if skew_ms > 0 else 'in the future'}, "
                       f"beyond the {TOLERANCE_MS // 1000} s a receiver should accept (a replay, or a clock "
                       "out of step)")
    expected = webhook_signature(secret, body, int(timestamp))
    if not hmac.compare_digest(expected.encode(), header.encode("ascii", errors="replace")):
        return False, ("signature does not match: signed with another webhook secret (rotated since?) "
                       "or the body was changed on the way")
    return True, "signature verified with the merchant's current webhook secret"


@dataclass(frozen=True)
class Received:
    """What the inbox made of one POST: the kept delivery when its signature verified, else
    None and why not."""

    verified: bool
    reason: str
    message: WebhookInboxMessage | None = None


def inbox_receive(*, inbox: WebhookInbox, headers: dict[str, str], body: bytes) -> Received:
    """Check one received POST. A delivery whose signature verifies is kept (only the latest
    KEEP_LATEST per inbox); any other is only counted, with its reason: the address is known to
    whoever saw it, and an unsigned POST must not show on the page as a webhook nor push a real
    delivery out of the ones kept."""
    verified, reason = signature_check(inbox.merchant.webhook_secret, headers.get("X-Service-Signature"), body)
    if not verified:
        WebhookInbox.objects.filter(pk=inbox.pk).update(
            refused_count=F("refused_count") + 1, last_refused_at=timezone.now(), last_refused_reason=reason[:300])
        return Received(False, reason)
    text = body.decode("utf-8", errors="replace")
    event_type = headers.get("X-Service-Event-Type", "")
    try:
        event_type = event_type or str(json.loads(text).get("event", ""))
    except (ValueError, AttributeError):
        pass
    with transaction.atomic():
        message = WebhookInboxMessage.objects.create(
            inbox=inbox, event_id=headers.get("X-Service-Event-Id", "")[:100], event_type=event_type[:64],
            headers={name: value for name, value in headers.items() if name.lower() not in _HIDDEN_HEADERS},
            body=text, verified=True, reason=reason)
        stale = inbox.messages.order_by("-received_at", "-id").values_list("id", flat=True)[
            WebhookInboxMessage.KEEP_LATEST:]
        WebhookInboxMessage.objects.filter(id__in=list(stale)).delete()
    return Received(True, reason, message)
