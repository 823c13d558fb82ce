"""Every action on disputes: taking the processor's word (its webhook, the sweep), and the
merchant's answers (accept, evidence), through the API or staff's console.

No call to the acquirer is made inside a transaction or under a row lock: the services check,
call the acquirer with nothing held, then record what the processor answered through
refunds.disputes.transitions.dispute_record (one durable transaction). Each answer is audited
(gateway.platform.services.audit_record).
"""
from __future__ import annotations

import logging
from datetime import datetime

from django.utils import timezone

from gateway.core.errors import NotFound, ServiceUnavailable, ValidationError
from gateway.core.transactions import ensure_no_transaction
from gateway.platform.services import audit_record
from payments.acquirer import acquirer_for
from payments.acquirer.base import (
    Acquirer,
    AcquirerError,
    AcquirerRefused,
    AcquirerUnavailable,
    DisputeFound,
    EvidenceFile,
)
from payments.services.notices import payment_for_order
from refunds.disputes import evidence, selectors
from refunds.disputes.transitions import Recorded, dispute_alert_raise, dispute_record
from refunds.models import Dispute, DisputeEvidence

logger = logging.getLogger("refunds.disputes")


class DisputeNotAnswerable(ValidationError):
    """The dispute is not awaiting the merchant (under review, decided): nothing to accept or send."""

    def __init__(self, dispute: Dispute, action: str):
        super().__init__(f"dispute is {dispute.status.upper()}: it cannot be {action} now", field="status")


def dispute_take(*, acquirer: Acquirer, found: DisputeFound, source: str) -> Recorded | None:
    """Record the processor's word about a dispute (a webhook's, the sweep's): the dispute of
    the payment its order names, opened or moved. None when the order is no payment of ours.
    Raises InvalidDisputeTransition when the table refuses the move."""
    payment = payment_for_order(found.order_ref)
    if payment is None:
        logger.warning("%s dispute %s names order %r: no payment of this gateway", acquirer.name,
                       found.processor_id, found.order_ref)
        return None
    recorded = dispute_record(payment_pk=payment.pk, acquirer=acquirer.name, found=found, source=source)
    _alert_if_due(recorded.dispute)
    return recorded


def _alert_if_due(dispute: Dispute, now: datetime | None = None) -> None:
    now = now or timezone.now()
    # Checked here first so that a dispute needing no alert takes no lock (the alert checks again).
    if dispute.deadline_alerted_at is None and selectors.dispute_due_soon(dispute, now):
        dispute_alert_raise(dispute_pk=dispute.pk, now=now)


def _acquirer_for(dispute: Dispute) -> Acquirer:
    acquirer = acquirer_for(dispute.payment)  # the acquirer that took the payment
    if acquirer.name != dispute.acquirer:
        # Raised at another acquirer than the one the gateway now pays with: answered there.
        raise ValidationError(f"dispute was raised at {dispute.acquirer}, which this gateway no longer "
                              "uses: answer it in that processor's dashboard", field="disputeId")
    return acquirer


def _answer(dispute: Dispute, action: str, call, *, actor, actor_name: str, detail: dict) -> Dispute:
    """Call the acquirer with nothing held, then record its word as the merchant's answer."""
    ensure_no_transaction()
    if dispute.status not in Dispute.ANSWERABLE_STATUSES:
        raise DisputeNotAnswerable(dispute, "accepted" if action == "accept" else "contested")
    acquirer = _acquirer_for(dispute)
    try:
        found = call(acquirer)
    except AcquirerUnavailable as exc:
        logger.warning("dispute %s %s: %s", dispute.dispute_id, action, exc)
        raise ServiceUnavailable("the processor did not answer; try again") from None
    except AcquirerRefused as exc:
        # Refused (decided meanwhile, say): read it as it stands, so the merchant sees why.
        logger.warning("dispute %s %s refused: %s", dispute.dispute_id, action, exc)
        _refresh(acquirer, dispute, source="refused answer")
        raise ValidationError(f"the processor refused it: {str(exc)[:200]}", field="disputeId") from None
    except AcquirerError as exc:
        logger.error("dispute %s %s failed: %s", dispute.dispute_id, action, exc)
        raise ServiceUnavailable("the processor could not take the answer; try again") from None
    recorded = dispute_record(payment_pk=dispute.payment_id, acquirer=acquirer.name, found=found, source=action,
                              actor_name=actor_name, answer={"action": action, **detail})
    audit_record(actor=actor, action=f"dispute.{action}", obj=recorded.dispute, merchant=dispute.merchant,
                 before={"status": dispute.status},
                 after={"status": recorded.dispute.status, "processorStatus": found.processor_status, **detail})
    return recorded.dispute


def dispute_accept(*, dispute: Dispute, actor, actor_name: str) -> Dispute:
    """Accept the dispute at the processor (the merchant will not contest it): the amount goes
    back to the customer. Call it outside any transaction. Raises DisputeNotAnswerable when it
    is not awaiting an answer, ServiceUnavailable when the processor did not answer,
    ValidationError when it refused."""
    return _answer(dispute, "accept", lambda acquirer: acquirer.dispute_accept(
        processor_id=dispute.processor_dispute_id), actor=actor, actor_name=actor_name, detail={})


def dispute_evidence_send(*, dispute: Dispute, doc_type: str, upload, note: str = "", actor,
                          actor_name: str) -> Dispute:
    """Contest the dispute with one document, `upload` (an uploaded file: its `name`, and
    `read`, of which at most one byte past the limit is read, so that an oversized file is
    refused without reading it all): checked (refunds.disputes.evidence), stored out of
    the web root, recorded (DisputeEvidence), sent to the processor, and the processor's answer
    recorded as the merchant's answer (UNDER_REVIEW, as a rule). Call it outside any
    transaction. Raises ValidationError naming `file` or `docType` for a refused file (nothing
    stored or sent), DisputeNotAnswerable, ServiceUnavailable (the file is kept, marked unsent:
    sending it again stores nothing twice)."""
    if dispute.status not in Dispute.ANSWERABLE_STATUSES:
        raise DisputeNotAnswerable(dispute, "contested")
    content = upload.read(evidence.max_bytes() + 1)
    checked = evidence.evidence_check(dispute=dispute, doc_type=doc_type, filename=upload.name or "",
                                      content=content)
    stored_as = evidence.evidence_store(dispute=dispute, checked=checked)
    row = DisputeEvidence.objects.create(dispute=dispute, doc_type=doc_type, filename=checked.filename,
                                         content_type=checked.content_type, size=len(content), sha256=checked.sha256,
                                         stored_as=stored_as, uploaded_by=actor_name[:150])
    sent = EvidenceFile(doc_type=doc_type, filename=checked.filename, content_type=checked.content_type,
                        content=checked.content, note=note[:500])
    detail = {"docType": doc_type, "filename": checked.filename, "size": len(content), "sha256": checked.sha256}
    answered = _answer(dispute, "evidence", lambda acquirer: acquirer.dispute_evidence_submit(
        processor_id=dispute.processor_dispute_id, evidence=sent), actor=actor, actor_name=actor_name,
        detail=detail)
    DisputeEvidence.objects.filter(pk=row.pk).update(sent_at=timezone.now())
    return answered


def _refresh(acquirer: Acquirer, dispute: Dispute, *, source: str) -> None:
    try:
        found = acquirer.dispute_get(processor_id=dispute.processor_dispute_id)
        dispute_record(payment_pk=dispute.payment_id, acquirer=acquirer.name, found=found, source=source)
    except Exception as exc:  # noqa: BLE001 - a reading for people; the sweep reads it again
        logger.warning("dispute %s: reading it again failed: %s", dispute.dispute_id, exc)


def dispute_for_merchant_or_404(*, merchant, dispute_id: str) -> Dispute:
    if not dispute_id.startswith("dsp_") or len(dispute_id) > 32:
        raise NotFound(f"no dispute {dispute_id}")
    return selectors.dispute_get_for_merchant(merchant=merchant, dispute_id=dispute_id)


# -- staff's console (gateway/console/dispute_views.py) ------------------------------------------

def evidence_max_bytes() -> int:
    return evidence.max_bytes()


def sandbox_disputes_offered() -> bool:
    """Whether staff may open a test dispute: staging, with the sandbox among the acquirers."""
    from django.conf import settings

    from payments.acquirer import acquirer_named, enabled
    from payments.acquirer.sandbox.acquirer import SandboxAcquirer

    # Asked by the acquirer's type, never its name (tests/acquirers).
    return not settings.IS_PRODUCTION and any(isinstance(acquirer_named(name), SandboxAcquirer) for name in enabled())


def dispute_sandbox_open(*, sabpaisa_txn_id: str) -> Dispute:
    """Staging: the sandbox's customer disputes the successful payment `sabpaisa_txn_id` now
    (docs/sandbox.md, "Disputes"), recorded as any processor's dispute. Raises ValidationError
    naming the field when there is no such payment or it cannot be disputed."""
    from payments.acquirer.sandbox import disputes as sandbox_disputes

    if not sandbox_disputes_offered():
        raise ValidationError("test disputes are the sandbox's, in staging", field="sabpaisaTxnId")
    from payments.acquirer.sandbox.acquirer import SandboxAcquirer

    payment = payment_for_order(sabpaisa_txn_id)
    if payment is None:
        raise NotFound(f"no payment {sabpaisa_txn_id}")
    acquirer = acquirer_for(payment)  # a dispute is the acquirer's that took the payment, always
    if not isinstance(acquirer, SandboxAcquirer):
        raise ValidationError(f"the payment was taken by {acquirer.name}, not the sandbox: only the sandbox's "
                              "payments take test disputes", field="sabpaisaTxnId")
    try:
        found = sandbox_disputes.dispute_open(payment=payment)
    except AcquirerRefused as exc:
        raise ValidationError(str(exc), field="sabpaisaTxnId") from None
    return dispute_take(acquirer=acquirer, found=found, source="console test dispute").dispute
