"""How long the payments app keeps the rows that only served a moment (gateway.platform.retention has
the table of every kind of row). Payments, their events and reversals are never deleted here."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from gateway.platform.retention import delete_in_batches
from payments.models import AcquirerNotice, SandboxAcquirerCall

# The sandbox acquirer's ledger answers status queries about calls cut off mid-way, which are
# asked within minutes (payments.services.cutoff); a month leaves room to look into one.
SANDBOX_CALLS_RETENTION = timedelta(days=30)
# A processor's webhooks as they arrived (AcquirerNotice) hold the customer's phone and email.
# Their effect is in the payment's and the refund's own events, kept for years; the notices
# themselves serve replay detection (minutes) and looking into a disputed one, so they are
# kept as long as our own webhook history (webhooks.retention).
ACQUIRER_NOTICES_RETENTION = timedelta(days=180)


def sandbox_calls_delete_old(*, now=None) -> int:
    """The sandbox acquirer's call ledger older than SANDBOX_CALLS_RETENTION."""
    cutoff = (now or timezone.now()) - SANDBOX_CALLS_RETENTION
    return delete_in_batches(SandboxAcquirerCall.objects.filter(created_at__lt=cutoff))


def acquirer_notices_delete_old(*, now=None) -> int:
    """The processor's webhooks as received (AcquirerNotice) older than ACQUIRER_NOTICES_RETENTION."""
    cutoff = (now or timezone.now()) - ACQUIRER_NOTICES_RETENTION
    return delete_in_batches(AcquirerNotice.objects.filter(created_at__lt=cutoff))
