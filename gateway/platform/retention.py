"""Data retention: how long each kind of row is kept, and the one way old rows are deleted.

What a regulated Indian payment aggregator keeps (docs/security.md, "Data retention"):
payments, their events, refunds, reversals and the audit log are records of money and of who
did what, kept for years (the PMLA rules ask for five years from the transaction; RBI's
payment-aggregator directions for the records' availability to it; we keep ten); what only
served a moment (browser sessions, idempotency keys, the sandbox acquirer's call ledger, the
webhook history) goes within days or months. Each app deletes its own rows with
`delete_in_batches`, from a beat task of its own (the schedule in gateway.settings):

| rows | kept | deleted by |
|---|---|---|
| sessions (checkout grants, console logins) | until they expire | `gateway.tasks.gateway_retention_task` |
| audit records | AUDIT_RETENTION (10 years) | `gateway.tasks.gateway_retention_task` |
| idempotency records | 24 hours after their response | `payments.tasks.idempotency_records_cleanup` |
| sandbox acquirer call ledger | payments.services.retention.SANDBOX_CALLS_RETENTION (30 days) | `payments.tasks.sandbox_calls_purge_task` |
| a processor's webhooks as received (AcquirerNotice: the customer's phone and email) | payments.services.retention.ACQUIRER_NOTICES_RETENTION (180 days) | `payments.tasks.acquirer_notices_purge_task` |
| webhook events, deliveries and attempts | webhooks.retention.WEBHOOK_HISTORY_RETENTION (180 days) | `webhooks.tasks.webhook_history_purge_task` |
| dispute evidence files (the rows stay) | refunds.disputes.evidence.RETENTION (540 days after the dispute is decided) | `refunds.dispute_tasks.dispute_evidence_purge_task` |
| payments, payment events, reversals, refunds, refund events, disputes, tokens and card consents | at least 10 years: never deleted by a task | archiving them is a decision for a person |
"""
from __future__ import annotations

import logging
from datetime import timedelta

from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from gateway.platform.models import AuditRecord

logger = logging.getLogger("gateway.retention")

AUDIT_RETENTION = timedelta(days=3653)
BATCH_SIZE = 1000
# At most this many batches a run: a large backlog is worked off over several runs, each short.
MAX_BATCHES = 100


def delete_in_batches(rows: QuerySet, *, batch_size: int = BATCH_SIZE, max_batches: int = MAX_BATCHES) -> int:
    """Delete the rows of `rows` (a filtered queryset), oldest (lowest key) first, `batch_size`
    at a time, each batch its own short transaction, so no lock is held long and a run that
    stops half-way has done whole batches. Rows depending on them go as their foreign keys say
    (CASCADE). Returns how many rows of `rows`' model were deleted."""
    label = rows.model._meta.label
    deleted = 0
    for _ in range(max_batches):
        keys = list(rows.order_by("pk").values_list("pk", flat=True)[:batch_size])
        if not keys:
            break
        with transaction.atomic():
            # The filter again, with the keys: a row that changed since it was read stays.
            _, per_model = rows.filter(pk__in=keys).delete()
        deleted += per_model.get(label, 0)
    if deleted:
        logger.info("retention: deleted %s %s rows", deleted, label)
    return deleted


def sessions_delete_expired(*, now=None) -> int:
    """Browser sessions past their expiry (Django's clearsessions, in batches)."""
    return delete_in_batches(Session.objects.filter(expire_date__lt=now or timezone.now()))


def audit_records_delete_old(*, now=None) -> int:
    """Audit records older than AUDIT_RETENTION."""
    return delete_in_batches(AuditRecord.objects.filter(created_at__lt=(now or timezone.now()) - AUDIT_RETENTION))
