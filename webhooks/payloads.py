"""What every event's payload carries, whoever builds it (docs/webhooks.md, "Payload").

The live SabPaisa webhook carries `timestamp` (when the event happened, ISO 8601 UTC with
milliseconds) and `idempotency_key` (a stable name for the event); receivers written from its
docs answer 400 without the key. The payments and refunds payloads add both; a test event's
key is its event id.

Which event types there are is said by the apps that record them (payments, refunds): each
registers its types here when it is ready (its AppConfig.ready), since webhooks stands below
them and imports neither.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone as dt_timezone

from django.utils import timezone

from webhooks.models import TEST_EVENT_TYPE

_registered_event_types: set[str] = set()


def event_types_register(names: Iterable[str]) -> None:
    """Called by an app that records events, at ready: the types it sends."""
    _registered_event_types.update(names)


def event_types() -> list[str]:
    """Every event type the gateway sends, sorted: the registered ones and the test event's."""
    return sorted({*_registered_event_types, TEST_EVENT_TYPE})


def event_timestamp(now: datetime | None = None) -> str:
    """2026-02-15T10:30:01.234Z: the payload's `timestamp`, taken when the event is recorded."""
    now = now or timezone.now()
    return now.astimezone(dt_timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
