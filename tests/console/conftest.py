"""Fixtures of the console tests: staff in each role (the real groups the migration made),
merchants whose webhook address is a real receiver on loopback, and a real browser. (Staff and
payments with a story are made by tests.support.factories: staff_in, story_payment.)"""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from payments.models import Payment
from tests.support.browser import shared_chromium
from tests.support.factories import make_merchant, staff_in
from tests.support.receiver import Receiver
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

ROLES = ("support", "finance", "administrators")


@pytest.fixture
def as_role(db):
    """as_role("support") -> a logged-in Django test client for a new staff user in that group."""

    def login(role: str | None) -> Client:
        client = Client()
        client.force_login(staff_in(role))
        return client

    return login


@pytest.fixture
def receiver():
    with Receiver() as r:
        yield r


@pytest.fixture
def shop(receiver, db):
    return make_merchant(code="SHOP", name="Chai Point Stores", webhook_url=receiver.url("/hooks/gateway"))


def deliver_all(payment: Payment) -> None:
    """Attempt every due webhook delivery of the payment's merchant once, now."""
    for delivery in WebhookDelivery.objects.filter(merchant=payment.merchant,
                                                   status__in=WebhookDelivery.DUE_STATUSES):
        delivery_attempt_run(delivery.pk)


def ago(**kwargs):
    return timezone.now() - timedelta(**kwargs)


# --- a real browser ------------------------------------------------------------------------------

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


@pytest.fixture(scope="module")
def chromium():
    """The system's Chromium through Playwright (never `playwright install`), shared with the
    other browser suites of the run (tests.support.browser): Playwright's sync API allows one
    instance per thread, so a console run after tests/tokens or tests/payments/hosted, whose
    browsers live for the session, must not start a second."""
    with shared_chromium() as browser:
        yield browser


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"console-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
