"""The webhook outbox: an event, its delivery to the merchant's address, one row per attempt.

The rows, not Celery's retry counter, are the truth: a delivery is due when its status is
pending or failed and `next_attempt_at` has passed. A worker claims a delivery by pushing
`next_attempt_at` forward by a lease and writing a `claim_token`; a worker that dies while
holding the claim simply lets the lease run out, and the beat sweep picks the delivery up again.
"""
from __future__ import annotations

import hashlib
import secrets

from django.db import models
from django.utils import timezone

from gateway.platform.models import Merchant

TEST_EVENT_TYPE = "webhook.test"


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(12)


class WebhookEvent(models.Model):
    """Something a merchant is told about. `body` is the payload serialised once, so every
    attempt of every delivery sends exactly the same bytes."""

    id = models.CharField(primary_key=True, max_length=40, default=new_event_id, editable=False)
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="webhook_events")
    event_type = models.CharField("type", max_length=64)
    # The payment's sabpaisaTxnId or the refund's refundId: the admin's per-payment log.
    subject_id = models.CharField("subject id", max_length=100, blank=True, db_index=True)
    payload = models.JSONField()
    # Compact ASCII JSON, so the text and the bytes sent are the same thing.
    body = models.TextField(editable=False)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["merchant", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.id} {self.event_type}"

    @property
    def body_bytes(self) -> bytes:
        return self.body.encode("ascii")


class WebhookDelivery(models.Model):
    """The sending of one event to the merchant's webhook address, retried on the schedule."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"        # not attempted yet (or resent), due at next_attempt_at
        DELIVERED = "delivered", "delivered"  # a 2xx answer was received
        FAILED = "failed", "failed"           # the last attempt failed; another is due at next_attempt_at
        DEAD = "dead", "dead"                 # the retry schedule is exhausted

    DUE_STATUSES = (Status.PENDING, Status.FAILED)

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    # Denormalised from the event for the per-merchant log and its index.
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="webhook_deliveries")
    # Where this delivery goes when its payment named its own address (S2S webhookUrl, which
    # arrived in an API request and so never reaches a private network: webhooks.delivery);
    # blank: the merchant's webhook address, set by staff, read at each attempt (`address`).
    url = models.CharField("address of this delivery", max_length=500, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # Every attempt ever made, resends included.
    attempts = models.PositiveIntegerField(default=0)
    # Attempts since the delivery was created or last resent: the position in the schedule.
    cycle_attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # Set while a worker holds the delivery; the lease is next_attempt_at.
    claim_token = models.CharField(max_length=32, blank=True, editable=False)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            # The sweep's query: due rows by time.
            models.Index(fields=["next_attempt_at"], name="webhook_delivery_due",
                         condition=models.Q(status__in=["pending", "failed"])),
            models.Index(fields=["merchant", "-created_at"]),
            # The console's needs-attention queue: deliveries dead since a date, oldest first
            # (webhooks.selectors.deliveries_dead_since). Dead ones are 1% of the log: without
            # it the queue read every delivery (a sequential scan of 3 million rows, issue 30).
            models.Index(fields=["created_at"], name="webhook_delivery_dead", condition=models.Q(status="dead")),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} of {self.event_id} ({self.status})"

    @property
    def address(self) -> str:
        """Where an attempt goes now: this delivery's own address, else the merchant's."""
        return self.url or self.merchant.webhook_url

    @property
    def in_flight(self) -> bool:
        return bool(self.claim_token) and self.next_attempt_at is not None and self.next_attempt_at > timezone.now()


class WebhookDeliveryAttempt(models.Model):
    """One POST. Created when the attempt starts, completed when its outcome is known; a row
    left without `finished_at` belongs to a worker that died and is marked interrupted."""

    class Outcome(models.TextChoices):
        IN_FLIGHT = "in_flight", "in flight"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed"
        INTERRUPTED = "interrupted", "interrupted"

    SNIPPET_CHARS = 1000

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_rows")
    number = models.PositiveIntegerField()
    outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.IN_FLIGHT)
    url = models.CharField(max_length=500)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    http_status = models.PositiveSmallIntegerField("HTTP status", null=True, blank=True)
    response_snippet = models.TextField(blank=True)
    error = models.TextField(blank=True)
    # The X-Service-Signature header exactly as sent: the signature explainer reads it.
    signature_header = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_number_unique"),
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}: {self.outcome}"

    @property
    def timestamp_ms(self) -> str:
        return self.signature_header.split(".", 1)[0] if self.signature_header else ""

    def signed_string_facts(self, body: bytes) -> dict:
        """Length and SHA-256 of the exact string that was signed, for the explainer."""
        if not self.signature_header:
            return {}
        signed = self.timestamp_ms.encode() + b"." + body
        return {"length": len(signed), "sha256": hashlib.sha256(signed).hexdigest(),
                "timestamp_ms": self.timestamp_ms}


def new_inbox_token() -> str:
    return secrets.token_hex(16)


class WebhookInbox(models.Model):
    """Staging only: a merchant's webhook inbox inside the gateway (webhooks/inbox.py). Its
    address carries an unguessable token, so one merchant's inbox is not another's to read."""

    merchant = models.OneToOneField(Merchant, on_delete=models.CASCADE, related_name="webhook_inbox")
    token = models.CharField(max_length=32, unique=True, default=new_inbox_token, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    # POSTs refused because their signature did not verify. Only their number and the latest
    # reason are kept, never what they carried: anyone who knows the address can post to it, and
    # what they post must neither be shown as a webhook nor push real deliveries out of the
    # KEEP_LATEST kept (issue 29, finding 7).
    refused_count = models.PositiveIntegerField(default=0)
    last_refused_at = models.DateTimeField(null=True, blank=True)
    last_refused_reason = models.CharField(max_length=300, blank=True)

    def __str__(self) -> str:
        return f"webhook inbox of {self.merchant.code}"


class WebhookInboxMessage(models.Model):
    """One delivery the inbox received whose signature verified, as it arrived. (`verified`
    and `reason` date from when refused POSTs were kept too; every row written now verified.)"""

    KEEP_LATEST = 100

    inbox = models.ForeignKey(WebhookInbox, on_delete=models.CASCADE, related_name="messages")
    received_at = models.DateTimeField(default=timezone.now)
    event_id = models.CharField(max_length=100, blank=True)
    event_type = models.CharField(max_length=64, blank=True)
    headers = models.JSONField(default=dict)
    body = models.TextField()
    verified = models.BooleanField(default=False)
    # Why the signature did or did not verify, in words a merchant developer can act on.
    reason = models.CharField(max_length=300)

    class Meta:
        ordering = ["-received_at", "-id"]
        indexes = [models.Index(fields=["inbox", "-received_at"], name="webhook_inbox_latest")]

    def __str__(self) -> str:
        return f"{self.event_id or 'message'} received {self.received_at:%H:%M:%S}"
