"""The only code that writes a dispute: `dispute_record` takes the processor's word about one
dispute (its webhook, the sweep's reading, the answer to our accept or evidence) and, in one
durable transaction under the payment's then the dispute's row lock, opens the dispute or moves
it through refunds.disputes.state.TRANSITIONS, appends its DisputeEvent and records the merchant's
webhook (dispute.opened / dispute.updated / dispute.closed) in the outbox. `dispute_alert_raise`
and `dispute_event_add` are the two other writes of its story.

The processor is the authority on where a dispute stands: the gateway never decides a dispute
itself. A word older than the one already recorded (a webhook delivered late, behind a newer
reading) changes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from gateway.core import metrics
from gateway.core.metrics import on_commit_inc
from payments.acquirer.base import DisputeFound
from payments.locks import lock_payment
from payments.models import Payment
from payments.services.dispute_mark import payment_open_dispute_set
from refunds.disputes import selectors
from refunds.disputes.locks import lock_dispute
from refunds.disputes.payloads import (
    CLOSED,
    OPENED,
    UPDATED,
    dispute_status_word,
    dispute_webhook_payload,
    iso_utc,
)
from refunds.disputes.state import ensure_transition
from refunds.models import Dispute, DisputeEvent
from webhooks.services import event_record

S = Dispute.Status
SYSTEM_ACTOR = "system"


@dataclass(frozen=True)
class Recorded:
    dispute: Dispute
    created: bool
    changed: bool   # False: the word was the one recorded already, or older (nothing written)


def dispute_event_add(dispute: Dispute, kind: str, *, actor_name: str = SYSTEM_ACTOR, from_status: str = "",
                      to_status: str = "", **detail) -> DisputeEvent:
    return DisputeEvent.objects.create(dispute=dispute, kind=kind, from_status=from_status, to_status=to_status,
                                       actor_name=actor_name[:150], detail=detail)


def _values(found: DisputeFound, payment: Payment) -> dict:
    return {
        "processor_status": found.processor_status[:64],
        "kind": found.kind if found.kind in Dispute.Kind.values else Dispute.Kind.DISPUTE,
        # A processor may leave the amount out: the payment's, which is what a full dispute takes.
        "amount": found.amount if found.amount else (payment.paid_amount or payment.amount),
        "reason_code": found.reason_code[:32],
        "reason_text": found.reason_text[:300],
        "respond_by": found.respond_by,
        "remarks": found.remarks[:500],
        "preferred_evidence": [{"code": item.code, "description": item.description}
                               for item in found.preferred_evidence],
        "evidence": list(found.evidence),
        "resolved_at": found.resolved_at,
    }


def _payment_follows(payment: Payment) -> None:
    """The payment's open dispute (the newest undecided one), for the enquiry: its own column."""
    newest = selectors.payment_open_dispute(payment)
    summary = None if newest is None else {
        "disputeId": newest.dispute_id, "status": dispute_status_word(newest.status), "type": newest.kind.upper(),
        "amount": newest.amount, "respondBy": iso_utc(newest.respond_by)}
    payment_open_dispute_set(payment, summary)


def _webhook(dispute: Dispute, event: DisputeEvent, event_type: str) -> None:
    payload = dispute_webhook_payload(dispute, event_type=event_type, event_pk=event.pk)
    # A payment created with its own webhookUrl (S2S) has its disputes' events sent there too.
    event_record(merchant=dispute.merchant, event_type=event_type, payload=payload,
                 subject_id=dispute.dispute_id, url=dispute.payment.webhook_url)


def _open(payment: Payment, acquirer: str, found: DisputeFound, now: datetime, actor_name: str) -> Dispute:
    dispute = Dispute.objects.create(
        merchant=payment.merchant, payment=payment, acquirer=acquirer, processor_dispute_id=found.processor_id,
        status=found.status, opened_at=found.opened_at, processor_updated_at=found.updated_at, synced_at=now,
        **_values(found, payment))
    dispute.payment = payment
    on_commit_inc(metrics.disputes.labels(found.status))
    event = dispute_event_add(dispute, DisputeEvent.Kind.STATUS, actor_name=actor_name, to_status=found.status,
                              processorStatus=found.processor_status, processorId=found.processor_id)
    _webhook(dispute, event, OPENED)
    if dispute.is_final:  # found already decided (the sweep came late): it is closed as well
        _webhook(dispute, event, CLOSED)
    return dispute


def _older(found: DisputeFound, dispute: Dispute) -> bool:
    return (found.updated_at is not None and dispute.processor_updated_at is not None
            and found.updated_at < dispute.processor_updated_at)


@transaction.atomic(durable=True)
def dispute_record(*, payment_pk: int, acquirer: str, found: DisputeFound, source: str,
                   actor_name: str = SYSTEM_ACTOR, answer: dict | None = None) -> Recorded:
    """Open or move the dispute the processor states in `found`, against payment `payment_pk`
    (whose order the processor named). `source` says where the word came from (webhook, sweep,
    accept, evidence) for the story; `answer`, when the word is the processor's reply to the
    merchant's own answer, is recorded as that answer (and sets accepted_at or
    evidence_submitted_at). Raises InvalidDisputeTransition when the table refuses the move
    (nothing is written)."""
    now = timezone.now()
    # Payment first, then dispute (the lock order): every dispute of one payment is opened one
    # at a time, so two deliveries of a new dispute open it once.
    payment = lock_payment(payment_pk)
    existing = selectors.dispute_for_processor(acquirer=acquirer, processor_id=found.processor_id)
    if existing is None:
        dispute = _open(payment, acquirer, found, now, actor_name)
        if answer:
            _answered(dispute, answer, now, actor_name)
        _payment_follows(payment)
        return Recorded(dispute, created=True, changed=True)
    dispute = lock_dispute(existing.pk)
    if _older(found, dispute) and not answer:
        return Recorded(dispute, created=False, changed=False)
    previous = dispute.status
    values = _values(found, payment)
    # A word that leaves the documents out (Cashfree's dispute webhooks carry neither list) keeps
    # the ones recorded: absent is not "none".
    for name in ("preferred_evidence", "evidence"):
        if not values[name]:
            del values[name]
    changes = {name: value for name, value in values.items() if getattr(dispute, name) != value}
    moved = found.status != previous
    if moved:
        ensure_transition(previous, found.status)
    for name, value in changes.items():
        setattr(dispute, name, value)
    dispute.status = found.status
    dispute.synced_at = now
    if found.updated_at is not None:
        dispute.processor_updated_at = found.updated_at
    dispute.save()
    if answer:
        _answered(dispute, answer, now, actor_name)
    if not moved and not changes and not answer:
        return Recorded(dispute, created=False, changed=False)
    detail = {"source": source, "processorStatus": found.processor_status,
              **({"changed": sorted(changes)} if changes else {})}
    if moved:
        on_commit_inc(metrics.disputes.labels(found.status))
        event = dispute_event_add(dispute, DisputeEvent.Kind.STATUS, actor_name=actor_name, from_status=previous,
                                  to_status=found.status, **detail)
    elif changes:
        event = dispute_event_add(dispute, DisputeEvent.Kind.UPDATE, actor_name=actor_name, **detail)
    else:
        event = dispute.events.order_by("-id").first()  # the answer's own event
    _webhook(dispute, event, CLOSED if moved and dispute.is_final else UPDATED)
    _payment_follows(payment)
    return Recorded(dispute, created=False, changed=True)


def _answered(dispute: Dispute, answer: dict, now: datetime, actor_name: str) -> None:
    """The merchant's (or staff's) answer, as the processor took it: its time and its story."""
    if answer.get("action") == "accept":
        dispute.accepted_at = dispute.accepted_at or now
    else:
        dispute.evidence_submitted_at = now
    dispute.save(update_fields=["accepted_at", "evidence_submitted_at", "updated_at"])
    dispute_event_add(dispute, DisputeEvent.Kind.ANSWER, actor_name=actor_name, **answer)


@transaction.atomic(durable=True)
def dispute_alert_raise(*, dispute_pk: int, now: datetime | None = None) -> bool:
    """Mark the deadline alert fired for a dispute still awaiting its answer within the alert
    window of respond_by (refunds.disputes.selectors.ALERT_WINDOW), with an event in its story.
    False when it no longer needs one (answered, decided, alerted already)."""
    now = now or timezone.now()
    payment_pk = Dispute.objects.values_list("payment_id", flat=True).get(pk=dispute_pk)
    lock_payment(payment_pk)
    dispute = lock_dispute(dispute_pk)
    if dispute.deadline_alerted_at is not None or not selectors.dispute_due_soon(dispute, now):
        return False
    dispute.deadline_alerted_at = now
    dispute.save(update_fields=["deadline_alerted_at", "updated_at"])
    hours = max(0, int((dispute.respond_by - now).total_seconds() // 3600))
    dispute_event_add(dispute, DisputeEvent.Kind.ALERT, respondBy=dispute.respond_by.isoformat(), hoursLeft=hours)
    on_commit_inc(metrics.dispute_deadline_alerts)
    return True
