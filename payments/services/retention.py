"""How long the payments app keeps the rows that only served a moment (gateway.platform.retention has
the table of every kind of row). Payments, their events and reversals are never deleted here."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from gateway.platform.retention import delete_in_batches
from payments.models import SandboxAcquirerCall

# The sandbox acquirer's ledger answers status queries about calls cut off mid-way, which are
# asked within minutes (payments.services.cutoff); a month leaves room to look into one.
SANDBOX_CALLS_RETENTION = timedelta(days=30)


def sandbox_calls_delete_old(*, now=None) -> int:
    """The sandbox acquirer's call ledger older than SANDBOX_CALLS_RETENTION."""
    cutoff = (now or timezone.now()) - SANDBOX_CALLS_RETENTION
    return delete_in_batches(SandboxAcquirerCall.objects.filter(created_at__lt=cutoff))
