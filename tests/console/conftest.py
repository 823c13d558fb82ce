"""Fixtures of the console tests: staff in each role (the real groups the migration made),
merchants whose webhook address is a real receiver on loopback, and payments with a story."""
from __future__ import annotations

import itertools
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from payments.models import Payment, PaymentEvent
from payments.services.transitions import payment_note
from refunds.models import Refund
from refunds.services import refund_create
from refunds.tasks import refund_process
from tests.refunds.factories import make_payment
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


def story_payment(merchant, *, refund_by: User | None = None, receiver: Receiver | None = None, **fields) -> Payment:
    """A card payment with every chapter: created, processing, the acquirer's answer, SUCCESS,
    the redirect back to the merchant, its webhook (refused once by the merchant, then
    delivered) and, when `refund_by` is given, a staff refund the bank processed, with its
    own webhook."""
    fields.setdefault("customer_email", "Asha.Rao@Example.com")
    fields.setdefault("customer_phone", "9876543210")
    payment = make_payment(merchant, amount=149_900, payment_mode=Payment.Mode.CARD, card_last4="1111",
                           card_network="VISA")
    Payment.objects.filter(pk=payment.pk).update(**fields)
    payment_note(payment_id=payment.pk, kind=PaymentEvent.Kind.ACQUIRER,
                 detail={"step": "card_otp", "outcome": "APPROVED", "message": "3-D Secure passed"})
    payment_note(payment_id=payment.pk, kind=PaymentEvent.Kind.REDIRECT,
                 detail={"status": "SUCCESS", "to": "https://merchant.example/return"})
    if receiver is not None:
        receiver.respond_with(500, 200)
        delivery = WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id)
        delivery_attempt_run(delivery.pk)
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
