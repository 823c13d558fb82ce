"""The reconciliation's exceptions: their one transitions table and the one service that
resolves them (finance, with a note, audited). The reconciliation itself only adds open ones
(refunds.settlements.reconcile), idempotently on (kind, subject)."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from gateway.core.errors import ValidationError
from gateway.platform.services import audit_record
from refunds.locks import lock_recon_exception
from refunds.models import ReconException

S = ReconException.Status

TRANSITIONS: dict[str, frozenset[str]] = {
    # Finance explains it (a note: written off, chased with the acquirer, a bank delay...).
    S.OPEN: frozenset({S.RESOLVED}),
    # Final: a resolved exception is the record of what finance decided; the reconciliation
    # never opens it again (its (kind, subject) is taken).
    S.RESOLVED: frozenset(),
}

NOTE_MAX_LENGTH = 2000


class InvalidReconExceptionTransition(ValidationError):
    """A status change the table does not allow (the exception is already resolved)."""

    def __init__(self, current: str, target: str):
        self.current, self.target = current, target
        super().__init__(f"the exception is {current} and cannot become {target}", field="status")


def ensure_transition(current: str, target: str) -> None:
    if target not in TRANSITIONS[current]:
        raise InvalidReconExceptionTransition(current, target)


@transaction.atomic(durable=True)
def recon_exception_resolve(*, exception_id: int, actor, note: str) -> ReconException:
    """Resolve an open exception with finance's `note`, recording who and when, and an audit
    record with the before and after. Raises ValidationError (field `note`) for an empty or
    too long note, InvalidReconExceptionTransition when it is already resolved; nothing is
    written then."""
    note = (note or "").strip()
    if not note:
        raise ValidationError("a note saying why is required to resolve an exception", field="note")
    if len(note) > NOTE_MAX_LENGTH:
        raise ValidationError(f"the note is at most {NOTE_MAX_LENGTH} characters", field="note")
    exception = lock_recon_exception(exception_id)
    ensure_transition(exception.status, S.RESOLVED)
    exception.status, exception.resolution_note = S.RESOLVED, note
    exception.resolved_by = actor if getattr(actor, "pk", None) else None
    exception.resolved_at = timezone.now()
    exception.save(update_fields=["status", "resolution_note", "resolved_by", "resolved_at"])
    audit_record(actor=actor, action="recon_exception.resolve", obj=exception, merchant=exception.merchant,
                 before={"status": S.OPEN}, after={"status": S.RESOLVED, "note": note})
    return exception
