"""Fixtures of the console tests: staff in each role (the real groups the migration made),
merchants whose webhook address is a real receiver on loopback, and payments with a story."""
from __future__ import annotations

import itertools
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from payments.cards import CardInput
from payments.models import Payment
from payments.services.hosted import hosted_card_pay, hosted_card_verify_otp, hosted_payment_create, hosted_redirect
from refunds.models import Refund
from refunds.services import refund_create
from refunds.tasks import refund_process
from tests.support.browser import shared_chromium
from tests.support.factories import make_merchant
from tests.support.receiver import Receiver
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

ROLES = ("support", "finance", "administrators")
_people = itertools.count(1)


def staff_in(role: str | None, *, username: str | None = None, password: str | None = None) -> User:
    """A staff user in `role`'s group. Without a password (the tests log in with force_login),
    so no password hash is computed: those take a third of a second each."""
    user = User.objects.create_user(username or f"{role or 'nobody'}-{next(_people)}", password=password,
                                    is_staff=True)
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


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


def story_payment(merchant, *, refund_by: User | None = None, receiver: Receiver | None = None,
                  phone: str = "9876543210", email: str = "Asha.Rao@Example.com") -> Payment:
    """A hosted card payment told by the real services, chapter by chapter: the session, the
    card (PROCESSING), the acquirer's 3-D Secure challenge and approval (SUCCESS), the redirect
    back to the merchant, its webhook (refused once by the merchant's receiver, then delivered)
    and, when `refund_by` is given, a staff refund the sandbox bank processed, with its webhook."""
    session = hosted_payment_create(
        merchant=getattr(merchant, "merchant", merchant), merchant_txn_id=f"ORD-{next(_people)}-{time.time_ns()}",
        amount=149_900, currency="INR", return_url="https://merchant.example/return", customer_name="Asha Rao",
        customer_email=email, customer_phone=phone, description="Masala chai sampler")
    payment = hosted_card_pay(payment=session.payment, card=CardInput("4111111111111111", 8, timezone.now().year + 3,
                                                                      "123"))
    payment = hosted_card_verify_otp(payment=payment, otp="123456")
    hosted_redirect(Payment.objects.select_related("merchant").get(pk=payment.pk))
    if receiver is not None:
        receiver.respond_with(500, 200)
        delivery = WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id)
        delivery_attempt_run(delivery.pk)
        # The retry is due in 10 s by the schedule; the test does not wait for it.
        WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
        delivery_attempt_run(delivery.pk)
    if refund_by is not None:
        result = refund_create(merchant=payment.merchant, payment=Payment.objects.get(pk=payment.pk), amount=50_000,
                               reason="damaged in transit", refund_id=f"rfnd_story{time.time_ns()}",
                               source=Refund.Source.ADMIN, actor=refund_by)
        refund_process(result.refund.pk)
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


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
