"""Sixty days of disputes with a controlled clock: 500 disputes raised over time against sandbox
payments with random deadlines (3 to 10 days), a fifth of their webhooks lost (opening and
updates alike), some answered with evidence, the rest left to run out. The beat is played as
production runs it, only slower: the deadline check every 10 minutes (production: every minute)
and the disputes sweep every 3 hours (production: every 15 minutes).

Holds: every dispute is known and, at the end, stands as the processor states it; no deadline
passes without its alert having fired at least 48 hours before it (unless the dispute was
answered before that), and no dispute is alerted twice or before its window."""
from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.acquirer import get_acquirer
from payments.acquirer.base import DisputeNotice, EvidenceFile
from payments.acquirer.sandbox import disputes as sandbox
from payments.models import SandboxDispute
from refunds.disputes import selectors, sweep
from refunds.disputes.notices import dispute_notice_apply
from refunds.disputes.transitions import dispute_record
from refunds.models import Dispute, DisputeEvent
from tests.support.factories import make_success_payment

pytestmark = pytest.mark.django_db

DAYS = 60
DISPUTES = 500
LOST = 0.2
ANSWERED = 0.3
TICK = timedelta(minutes=10)
SWEEP_EVERY = timedelta(hours=3)


class Clock:
    def __init__(self, at):
        self.at = at

    def now(self):
        return self.at


def test_sixty_days_of_disputes_none_missed_every_alert_48_hours_ahead(merchant, monkeypatch):
    rng = random.Random(32)
    start = timezone.now().replace(microsecond=0)
    clock = Clock(start)
    monkeypatch.setattr(timezone, "now", clock.now)
    monkeypatch.setattr(sweep, "PAYMENTS_PER_RUN", 100)
    acquirer = get_acquirer()

    # The processor's plan: when each dispute is raised, its deadline, whether its webhooks arrive,
    # and when (if ever) the merchant answers it.
    payments = [make_success_payment(merchant, amount=rng.randrange(10_000, 500_000)) for _ in range(DISPUTES)]
    plan = sorted(((start + timedelta(minutes=rng.randrange(0, (DAYS - 11) * 24 * 60)), payment)
                   for payment in payments), key=lambda item: item[0])
    opening = iter(plan)
    upcoming = next(opening, None)
    answers: list[tuple] = []   # (when, processor id)
    answered_at: dict[str, object] = {}
    webhooks = lost = 0

    def deliver(found) -> None:
        nonlocal webhooks, lost
        if rng.random() < LOST:
            lost += 1
            return
        webhooks += 1
        dispute_notice_apply(acquirer=acquirer, notice=DisputeNotice(found), fresh=True)

    last_sweep = start - SWEEP_EVERY
    end = start + timedelta(days=DAYS)
    while clock.at <= end:
        now = clock.at
        while upcoming is not None and upcoming[0] <= now:
            _, payment = upcoming
            found = sandbox.dispute_open(payment=payment, now=now)
            respond_by = now + timedelta(minutes=rng.randrange(3 * 24 * 60, 10 * 24 * 60))
            SandboxDispute.objects.filter(processor_id=found.processor_id).update(respond_by=respond_by)
            deliver(sandbox.dispute_get(found.processor_id, now=now))
            if rng.random() < ANSWERED:
                answers.append((now + (respond_by - now) * rng.uniform(0.05, 0.9), found.processor_id))
            upcoming = next(opening, None)
        for when, processor_id in [a for a in answers if a[0] <= now]:
            answers.remove((when, processor_id))
            answered = sandbox.dispute_evidence_submit(processor_id, EvidenceFile(
                doc_type="Delivery/Service Proof", filename="pod.pdf", content_type="application/pdf",
                content=b"%PDF-1.4"), now=now)
            answered_at[processor_id] = now
            dispute = Dispute.objects.filter(processor_dispute_id=processor_id).first()
            if dispute is not None:  # the merchant answered through the gateway: recorded at once
                dispute_record(payment_pk=dispute.payment_id, acquirer=acquirer.name, found=answered,
                               source="evidence", answer={"action": "evidence"})
            # The processor's decision two minutes later comes by webhook, or not (the sweep reads it).
        sweep.deadline_alerts_raise(now=now)
        if now - last_sweep >= SWEEP_EVERY:
            result = sweep.disputes_sweep(now=now, acquirer=acquirer)
            assert not result.errors, result.errors
            last_sweep = now
        clock.at = now + TICK

    # Every dispute the processor raised is known, and stands as the processor states it now
    # (one more sweep after the last reading age, as production's next runs would).
    clock.at = end + sweep.REFRESH_AFTER + TICK
    sweep.disputes_sweep(now=clock.at, acquirer=acquirer)
    processor = {row.processor_id: sandbox.dispute_get(row.processor_id, now=clock.at)
                 for row in SandboxDispute.objects.all()}
    ours = {d.processor_dispute_id: d for d in Dispute.objects.all()}
    assert len(processor) == DISPUTES and set(ours) == set(processor)
    stale = [(pid, ours[pid].status, found.status) for pid, found in processor.items() if ours[pid].status != found.status]
    assert not stale, stale[:10]
    assert lost > 50 and webhooks > 300  # the lost webhooks were real, and most arrived

    # No deadline passed without its alert 48 hours ahead.
    alerted_late, alerted_twice, alerted_early = [], [], []
    for pid, dispute in ours.items():
        respond_by = SandboxDispute.objects.get(processor_id=pid).respond_by
        alerts = list(dispute.events.filter(kind=DisputeEvent.Kind.ALERT))
        answered_in_time = pid in answered_at and answered_at[pid] < respond_by - selectors.ALERT_BEFORE
        if answered_in_time:
            continue
        if not alerts or dispute.deadline_alerted_at > respond_by - selectors.ALERT_BEFORE:
            alerted_late.append((pid, respond_by, dispute.deadline_alerted_at))
        if len(alerts) > 1:
            alerted_twice.append(pid)
        if dispute.deadline_alerted_at and dispute.deadline_alerted_at < respond_by - selectors.ALERT_WINDOW - TICK:
            alerted_early.append(pid)
    assert not alerted_late, alerted_late[:10]
    assert not alerted_twice and not alerted_early
    decided = {status for status in Dispute.objects.values_list("status", flat=True)}
    assert {Dispute.Status.WON, Dispute.Status.LOST} <= decided
