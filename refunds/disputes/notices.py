"""An acquirer's word about a dispute (its webhook, read as a DisputeNotice by the acquirer's own
package), applied through the dispute's own transitions. The inbound door
(gateway/inbound/pipeline.py) calls it."""
from __future__ import annotations

from payments.acquirer.base import Acquirer, AcquirerError, DisputeNotice
from payments.models import Payment
from refunds.disputes.services import dispute_take
from refunds.disputes.state import InvalidDisputeTransition


def dispute_notice_apply(*, acquirer: Acquirer, notice: DisputeNotice, fresh: bool) -> tuple[bool, str, Payment | None]:
    """Open or move the dispute the notice speaks of. A notice delivered late (not `fresh`) is
    not taken at its word: the dispute is read from the processor instead (AcquirerUnavailable
    when it cannot be: the door asks for the notice again); one without the documents the
    processor asks for is completed by reading the dispute. Returns whether it was applied, what
    happened, and the payment, for the notice's record."""
    found = notice.dispute
    if not fresh:
        found = acquirer.dispute_get(processor_id=found.processor_id)
    elif not found.preferred_evidence:
        # A processor's webhook may leave out the documents it asks for (Cashfree's does): read
        # the dispute for them, or take the notice as it is when that fails (the sweep reads
        # the dispute again later).
        try:
            found = acquirer.dispute_get(processor_id=found.processor_id)
        except AcquirerError:
            pass
    try:
        recorded = dispute_take(acquirer=acquirer, found=found, source="webhook")
    except InvalidDisputeTransition as exc:
        return False, f"dispute {found.processor_id}: {exc.message}", None
    if recorded is None:
        return False, "no payment of this gateway has that order id", None
    dispute = recorded.dispute
    if recorded.created:
        result = f"dispute {dispute.dispute_id} opened: {dispute.status}"
    elif recorded.changed:
        result = f"dispute {dispute.dispute_id}: {dispute.status}"
    else:
        result = f"dispute {dispute.dispute_id}: nothing new"
    return True, result, dispute.payment
