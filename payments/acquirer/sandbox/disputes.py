"""The sandbox's disputes: a processor's side of chargebacks, so that merchants build their
handling in staging (docs/sandbox.md, "Disputes").

A dispute is raised against a successful payment in two ways:

- the test amounts: a payment of exactly DISPUTED_AMOUNT_WON (100021 paise, ₹1,000.21) or
  DISPUTED_AMOUNT_LOST (100022, ₹1,000.22) is disputed by its customer; the sandbox states the
  dispute the first time it is asked about the payment (the disputes sweep asks within minutes);
- staff's console action "Open a test dispute" on any successful sandbox payment (`dispute_open`).

Its life, read from the row and the clock whenever it is asked (no task moves it):

- raised: a chargeback, reason 13.1 "Merchandise / services not received", the payment's whole
  amount, respond_by RESPOND_WITHIN after it was raised, needs_response;
- evidence sent: under_review; DECISION_AFTER later it is decided: won, or lost for the
  DISPUTED_AMOUNT_LOST payment;
- accepted: accepted at once;
- respond_by passed with no answer: lost.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from gateway.core.ids import random_string
from payments.acquirer.base import (
    DISPUTE_ACCEPTED,
    DISPUTE_LOST,
    DISPUTE_NEEDS_RESPONSE,
    DISPUTE_UNDER_REVIEW,
    DISPUTE_WON,
    AcquirerRefused,
    DisputeEvidenceType,
    DisputeFound,
    EvidenceFile,
)
from payments.models import Payment, SandboxDispute

DISPUTED_AMOUNT_WON = 100021
DISPUTED_AMOUNT_LOST = 100022
RESPOND_WITHIN = timedelta(days=7)
DECISION_AFTER = timedelta(minutes=2)
REASON_CODE, REASON_TEXT = "13.1", "Merchandise / services not received"
PREFERRED = (DisputeEvidenceType("Delivery/Service Proof", "Proof that the customer received the goods or services."),
             DisputeEvidenceType("Refund Proof", "Proof that the amount was refunded to the customer."))
PREFERRED_CODES = frozenset(item.code for item in PREFERRED)


def _new_id() -> str:
    return "sbd_" + random_string("0123456789", 12)


def _found(row: SandboxDispute, now: datetime) -> DisputeFound:
    stage, resolved = row.stage, None
    if stage == DISPUTE_UNDER_REVIEW and row.answered_at and now >= row.answered_at + DECISION_AFTER:
        stage = DISPUTE_LOST if row.payment.amount == DISPUTED_AMOUNT_LOST else DISPUTE_WON
        resolved = row.answered_at + DECISION_AFTER
    elif stage == DISPUTE_NEEDS_RESPONSE and now > row.respond_by:
        stage, resolved = DISPUTE_LOST, row.respond_by
    elif stage == DISPUTE_ACCEPTED:
        resolved = row.answered_at
    updated = resolved or row.updated_at
    return DisputeFound(
        processor_id=row.processor_id, order_ref=row.payment.sabpaisa_txn_id, status=stage,
        processor_status=f"SANDBOX_{stage.upper()}", kind=row.kind, amount=row.amount, reason_code=REASON_CODE,
        reason_text=REASON_TEXT, respond_by=row.respond_by, opened_at=row.opened_at, updated_at=updated,
        resolved_at=resolved, remarks="sandbox test dispute", preferred_evidence=PREFERRED,
        evidence=tuple(row.evidence), raw={"sandbox": True})


def dispute_open(*, payment: Payment, now: datetime | None = None) -> DisputeFound:
    """Staff's console action: the customer disputes `payment` (a successful one) now."""
    if payment.status != Payment.Status.SUCCESS:
        raise AcquirerRefused("only a successful payment can be disputed")
    now = now or timezone.now()
    row = SandboxDispute.objects.create(processor_id=_new_id(), payment=payment, stage=DISPUTE_NEEDS_RESPONSE,
                                        amount=payment.paid_amount or payment.amount,
                                        respond_by=now + RESPOND_WITHIN, opened_at=now, updated_at=now)
    return _found(row, now)


def disputes_of(payment: Payment, now: datetime | None = None) -> list[DisputeFound]:
    now = now or timezone.now()
    if payment.status == Payment.Status.SUCCESS and payment.amount in (DISPUTED_AMOUNT_WON, DISPUTED_AMOUNT_LOST):
        with transaction.atomic():
            # The customer disputes it once; asked twice at once, the second waits and finds it.
            Payment.objects.select_for_update(of=("self",)).filter(pk=payment.pk).first()
            if not SandboxDispute.objects.filter(payment=payment).exists():
                dispute_open(payment=payment, now=(payment.completed_at or now))
    rows = list(SandboxDispute.objects.filter(payment=payment).order_by("id"))
    for row in rows:
        row.payment = payment  # the caller's row: no join to read it again
    return [_found(row, now) for row in rows]


def _row(processor_id: str) -> SandboxDispute:
    row = SandboxDispute.objects.select_related("payment").filter(processor_id=processor_id).first()
    if row is None:
        raise AcquirerRefused(f"the sandbox has no dispute {processor_id}")
    return row


def dispute_get(processor_id: str, now: datetime | None = None) -> DisputeFound:
    return _found(_row(processor_id), now or timezone.now())


def _answer(processor_id: str, now: datetime | None, change) -> DisputeFound:
    now = now or timezone.now()
    with transaction.atomic():
        row = _row(processor_id)
        row = SandboxDispute.objects.select_for_update().select_related("payment").get(pk=row.pk)
        if _found(row, now).status not in (DISPUTE_NEEDS_RESPONSE, DISPUTE_ACCEPTED, DISPUTE_UNDER_REVIEW):
            raise AcquirerRefused(f"the sandbox dispute {processor_id} is decided")
        change(row, now)
        row.updated_at = now
        row.save()
    return _found(row, now)


def dispute_accept(processor_id: str, now: datetime | None = None) -> DisputeFound:
    def accept(row: SandboxDispute, now: datetime) -> None:
        if row.stage == DISPUTE_UNDER_REVIEW:
            raise AcquirerRefused("evidence was sent: the sandbox dispute is under review")
        if row.stage != DISPUTE_ACCEPTED:
            row.stage, row.answered_at = DISPUTE_ACCEPTED, now

    return _answer(processor_id, now, accept)


def dispute_evidence_submit(processor_id: str, evidence: EvidenceFile, now: datetime | None = None) -> DisputeFound:
    if evidence.doc_type not in PREFERRED_CODES:
        raise AcquirerRefused(f"doc_type {evidence.doc_type!r} is not one this dispute asks for")

    def submit(row: SandboxDispute, now: datetime) -> None:
        if row.stage == DISPUTE_ACCEPTED:
            raise AcquirerRefused("the sandbox dispute was accepted")
        row.evidence = [*row.evidence, evidence.filename[:200]]
        row.stage, row.answered_at = DISPUTE_UNDER_REVIEW, now

    return _answer(processor_id, now, submit)
