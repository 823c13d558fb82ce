"""The beat's disputes sweep and evidence retention: thin tasks over refunds.disputes.sweep
(docs/disputes.md)."""
from celery import shared_task

from gateway.core.metrics import sweep_timed
from refunds.disputes import sweep


@shared_task(name="refunds.dispute_tasks.disputes_sweep_task", ignore_result=True)
def disputes_sweep_task() -> int:
    """Read stale disputes again, ask about recent payments' disputes, raise deadline alerts."""
    with sweep_timed("disputes"):
        return sweep.disputes_sweep().alerts


@shared_task(name="refunds.dispute_tasks.dispute_deadlines_task", ignore_result=True)
def dispute_deadlines_task() -> int:
    """Raise the deadline alert of disputes now within 48 h of respond_by with no answer."""
    with sweep_timed("dispute-deadlines"):
        return sweep.deadline_alerts_raise()


@shared_task(name="refunds.dispute_tasks.dispute_evidence_purge_task", ignore_result=True)
def dispute_evidence_purge_task() -> int:
    """Delete evidence files past their retention (docs/security.md, "Data retention")."""
    with sweep_timed("dispute-evidence-retention"):
        return sweep.evidence_files_purge()
