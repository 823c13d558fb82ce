"""What every event's payload carries, whoever builds it (docs/webhooks.md, "Payload").

The live SabPaisa webhook carries `timestamp` (when the event happened, ISO 8601 UTC with
milliseconds) and `idempotency_key` (a stable name for the event); receivers written from its
docs answer 400 without the key. The payments and refunds payloads add both; a test event's
key is its event id.

Which event types there are is said by the apps that record them (payments, refunds): each
registers its types here when it is ready (its AppConfig.ready), since webhooks stands below
them and imports neither. It is the one thing an app fills in at start (docs/decisions.md, D16),
and it is checked at start: `check_event_types` refuses an empty registry, a name that is not
`subject.event`, and a type two apps claim.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timezone as dt_timezone

from django.core import checks
from django.utils import timezone

from webhooks.models import TEST_EVENT_TYPE

# event type -> the labels of the apps that registered it.
_registered_event_types: dict[str, set[str]] = {}

EVENT_TYPE_NAME = re.compile(r"[a-z][a-z_]*\.[a-z][a-z_]*")


def event_types_register(app_label: str, names: Iterable[str]) -> None:
    """Called by an app that records events, at ready: its label and the types it sends."""
    for name in names:
        _registered_event_types.setdefault(name, set()).add(app_label)


def event_types() -> list[str]:
    """Every event type the gateway sends, sorted: the registered ones and the test event's."""
    return sorted({*_registered_event_types, TEST_EVENT_TYPE})


def check_event_types(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """The registry at start (a Django system check: `manage.py check`, `migrate` and every other
    command that checks refuse to go on): webhooks.E001 when no app registered a type (the
    delivery log could filter by nothing, and a payment's events would be unnamed there),
    webhooks.E002 for a name that is not `subject.event` in lower case, webhooks.E003 for a type
    two apps registered (whose webhook would it be?)."""
    errors = []
    if not _registered_event_types:
        errors.append(checks.Error("no app registered its webhook event types",
                                   hint="an app that records events calls webhooks.payloads.event_types_register "
                                        "in its AppConfig.ready", id="webhooks.E001"))
    for name, apps in sorted(_registered_event_types.items()):
        if not EVENT_TYPE_NAME.fullmatch(name):
            errors.append(checks.Error(f"webhook event type {name!r} (registered by {', '.join(sorted(apps))}) "
                                       "is not subject.event in lower case", id="webhooks.E002"))
        if len(apps) > 1:
            errors.append(checks.Error(f"webhook event type {name!r} is registered by {' and '.join(sorted(apps))}",
                                       hint="each event type belongs to the one app that records it",
                                       id="webhooks.E003"))
    return errors


def event_timestamp(now: datetime | None = None) -> str:
    """2026-02-15T10:30:01.234Z: the payload's `timestamp`, taken when the event is recorded."""
    now = now or timezone.now()
    return now.astimezone(dt_timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
