"""The event-type registry, the one thing apps fill in at start (docs/decisions.md, D16), is
checked at start: Django's system checks refuse an empty registry, a malformed name and a type
two apps claim; as installed, payments' and refunds' types are there and the check is quiet."""
import pytest
from django.core import checks

from webhooks import payloads


def _errors():
    return [message.id for message in checks.run_checks() if message.id.startswith("webhooks.")]


def test_the_installed_apps_register_their_types_and_the_check_is_quiet():
    assert {"payment.success", "payment.failed", "payment.expired", "refund.processed",
            "refund.failed"} <= set(payloads.event_types())
    assert _errors() == []


@pytest.mark.parametrize(("registry", "error"), [
    ({}, "webhooks.E001"),
    ({"payment.success": {"payments"}, "Refund Failed": {"refunds"}}, "webhooks.E002"),
    ({"payment.success": {"payments", "refunds"}}, "webhooks.E003"),
])
def test_a_registry_start_cannot_trust_stops_the_start(monkeypatch, registry, error):
    monkeypatch.setattr(payloads, "_registered_event_types", registry)
    assert _errors() == [error]
