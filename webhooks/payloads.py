"""What every event's payload carries, whoever builds it (docs/webhooks.md, "Payload").

The live SabPaisa webhook carries `timestamp` (when the event happened, ISO 8601 UTC with
milliseconds) and `idempotency_key` (a stable name for the event); receivers written from its
docs answer 400 without the key. The payments and refunds payloads add both; a test event's
key is its event id.
"""
from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

from django.utils import timezone


def event_timestamp(now: datetime | None = None) -> str:
    """2026-02-15T10:30:01.234Z: the payload's `timestamp`, taken when the event is recorded."""
    now = now or timezone.now()
    return now.astimezone(dt_timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
