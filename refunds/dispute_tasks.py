"""The beat's disputes sweep: a thin task over refunds.disputes.sweep (docs/disputes.md)."""
from celery import shared_task

from gateway.core.metrics import sweep_timed
from refunds.disputes import sweep


@shared_task(name="refunds.dispute_tasks.disputes_sweep_task", ignore_result=True)
def disputes_sweep_task() -> int:
    """Read stale disputes again, ask about recent payments' disputes, raise deadline alerts."""
    with sweep_timed("disputes"):
        return sweep.disputes_sweep().alerts
