"""The disputes sweep, the beat's safety net for lost dispute webhooks and missed deadlines
(refunds.dispute_tasks runs it; docs/disputes.md):

1. Read again every dispute not yet decided whose processor's word is older than
   REFRESH_AFTER: a lost dispute.updated webhook is caught within that time.
2. Ask the acquirer about the disputes of the next batch of payments that succeeded within
   LOOKBACK (the window card networks give a customer to dispute), in turn by pk, so that the
   whole window is asked about every few runs: a lost DISPUTE_CREATED is caught too.
3. Raise the deadline alert of every dispute within 48 h of respond_by with no answer
   (refunds.disputes.transitions.dispute_alert_raise), and set the gauges the alert rule reads.
   This step also runs alone every minute (`deadline_alerts_raise`, beat entry
   "disputes-deadlines"): it reads the database only.

Each step calls the acquirer with nothing held, one dispute or payment at a time (the database
is read and written a batch at a time), and one that fails (the processor unreachable) is left
for the next run: nothing here raises for it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone

from gateway.core import metrics
from gateway.core.transactions import ensure_no_transaction
from payments.acquirer import acquirer_for
from payments.acquirer.base import Acquirer, AcquirerError
from refunds.disputes import evidence, selectors
from refunds.disputes.services import dispute_take
from refunds.disputes.state import InvalidDisputeTransition
from refunds.disputes.transitions import dispute_alert_raise, dispute_record
from refunds.models import Dispute, DisputeEvidence, DisputeSweepMark

logger = logging.getLogger("refunds.disputes")

REFRESH_AFTER = timedelta(hours=6)
LOOKBACK = timedelta(days=120)
PAYMENTS_PER_RUN = 200
DISPUTES_PER_RUN = 200
MARK = "payments"


@dataclass
class SweepResult:
    refreshed: int = 0
    payments_asked: int = 0
    found: int = 0
    alerts: int = 0
    errors: list[str] = field(default_factory=list)


def _news(found, dispute: Dispute) -> bool:
    """Whether the processor's reading may say something the dispute's row does not: another
    status, or a change time after the one recorded (or none to compare)."""
    return (found.status != dispute.status or found.updated_at is None or dispute.processor_updated_at is None
            or found.updated_at > dispute.processor_updated_at)


def _refresh(routed: Acquirer | None, dispute_pks: list[int], result: SweepResult) -> None:
    # The batch read in one query and marked read in one statement; between, one processor call
    # per dispute with nothing held. A row read here may be older than the dispute by the time
    # its turn comes (a webhook meanwhile): dispute_record compares under the lock.
    disputes = Dispute.objects.select_related("payment").in_bulk(dispute_pks)
    read = []
    for pk in dispute_pks:
        dispute = disputes.get(pk)
        if dispute is None:
            continue
        acquirer = routed or acquirer_for(dispute.payment)
        # Another acquirer's dispute (the gateway moved) is only marked read, so that it does not
        # hold the queue: no one here can read it; staff follow it in that processor's dashboard.
        if dispute.acquirer == acquirer.name:
            try:
                found = acquirer.dispute_get(processor_id=dispute.processor_dispute_id)
                if _news(found, dispute):
                    dispute_record(payment_pk=dispute.payment_id, acquirer=acquirer.name, found=found, source="sweep")
                    result.refreshed += 1
            except (AcquirerError, InvalidDisputeTransition) as exc:
                result.errors.append(f"{dispute.dispute_id}: {exc}")
                logger.warning("disputes sweep: dispute %s not read: %s", dispute.dispute_id, exc)
                continue  # not read: first in the queue next run
        read.append(pk)
    # Read now, whether or not anything changed (dispute_record leaves an older word unwritten).
    Dispute.objects.filter(pk__in=read).update(synced_at=timezone.now())


def _ask(routed: Acquirer | None, now: datetime, result: SweepResult) -> None:
    mark, _ = DisputeSweepMark.objects.get_or_create(name=MARK)
    payments = selectors.payments_to_ask_about_disputes(after_pk=mark.last_payment_pk,
                                                        completed_since=now - LOOKBACK, limit=PAYMENTS_PER_RUN)
    last = 0 if len(payments) < PAYMENTS_PER_RUN else payments[-1].pk  # the window's end: start over
    asked_up_to = mark.last_payment_pk
    # The batch's disputes as recorded, read once (a payment's own may change meanwhile by its
    # webhook: then dispute_take finds nothing new, which is all the read is for).
    on_record: dict[tuple[int, str], dict[str, Dispute]] = {}
    for dispute in Dispute.objects.filter(payment__in=[payment.pk for payment in payments]):
        on_record.setdefault((dispute.payment_id, dispute.acquirer), {})[dispute.processor_dispute_id] = dispute
    for payment in payments:
        acquirer = routed or acquirer_for(payment)  # asked at the acquirer that took it
        try:
            found_all = acquirer.disputes_of(payment=payment)
        except AcquirerError as exc:
            # Unasked: the mark stops before it, so the next run asks it first.
            result.errors.append(f"{payment.sabpaisa_txn_id}: {exc}")
            last = asked_up_to
            break
        asked_up_to = payment.pk
        result.payments_asked += 1
        known = on_record.get((payment.pk, acquirer.name), {})
        for found in found_all:
            if found.processor_id in known and not _news(found, known[found.processor_id]):
                continue  # as recorded: no lock taken for nothing
            try:
                recorded = dispute_take(acquirer=acquirer, found=found, source="sweep")
            except InvalidDisputeTransition as exc:
                result.errors.append(f"{found.processor_id}: {exc}")
                continue
            if recorded is not None and recorded.changed:
                result.found += 1
    DisputeSweepMark.objects.filter(pk=mark.pk).update(last_payment_pk=last)


def deadline_alerts_raise(*, now: datetime | None = None) -> int:
    """Fire the alert of every dispute now within 48 h of respond_by with no answer; set the
    gauges (gateway_disputes_due_soon, gateway_disputes_open_amount_paise). Returns how many fired."""
    now = now or timezone.now()
    fired = sum(dispute_alert_raise(dispute_pk=pk, now=now) for pk in selectors.disputes_due_for_alert(now=now))
    at_risk = selectors.disputes_at_risk(now=now)
    metrics.disputes_due_soon.set(at_risk["due_soon"])
    metrics.disputes_open_amount.set(at_risk["amount"])
    return fired


def disputes_sweep(*, now: datetime | None = None, acquirer: Acquirer | None = None) -> SweepResult:
    """One run of the sweep (the module's docstring). Each payment and dispute is asked at the
    acquirer that took the payment (payments.acquirer.acquirer_for), or at `acquirer` when one is
    given. Call it outside any transaction."""
    ensure_no_transaction()
    now = now or timezone.now()
    result = SweepResult()
    _refresh(acquirer, selectors.disputes_stale(synced_before=now - REFRESH_AFTER, limit=DISPUTES_PER_RUN), result)
    _ask(acquirer, now, result)
    result.alerts = deadline_alerts_raise(now=now)
    return result


def evidence_files_purge(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Delete the evidence files whose retention has passed (refunds.disputes.evidence.RETENTION
    after their dispute was decided; docs/security.md), keeping each row (type, name, size,
    SHA-256, who sent it, when) with the dispute's story. Returns how many files went."""
    now = now or timezone.now()
    cutoff = now - evidence.RETENTION
    rows = list(DisputeEvidence.objects.filter(dispute__status__in=Dispute.FINAL_STATUSES,
                                               dispute__updated_at__lt=cutoff).exclude(stored_as="")
                .values_list("pk", "stored_as")[:limit])
    for pk, stored_as in rows:
        evidence.evidence_delete(stored_as)
        DisputeEvidence.objects.filter(pk=pk).update(stored_as="")
    return len(rows)
