"""Thin Celery tasks: take ids, call one service. The refund rows, not Celery's retry counter,
decide what still needs the bank (refunds.submission). refunds.services queues refund_process;
nothing this module imports imports it."""
from celery import shared_task

from gateway.core.metrics import sweep_timed

from refunds import submission
from refunds.dispute_tasks import (  # noqa: F401  (registered with the worker)
    dispute_deadlines_task,
    dispute_evidence_purge_task,
    disputes_sweep_task,
)
from refunds.settlement_tasks import reconcile_task, settlements_fetch_task  # noqa: F401  (registered with the worker)


@shared_task(name="refunds.tasks.refund_process", ignore_result=True)
def refund_process(refund_pk: int) -> None:
    """Submit one INITIATED refund to the bank and record the answer; a no-op when it is final
    or another worker holds it (safe to repeat)."""
    submission.refund_submit(refund_pk=refund_pk)


@shared_task(name="refunds.tasks.refunds_pending_sweep", ignore_result=True)
def refunds_pending_sweep() -> int:
    """The beat's safety net: submits INITIATED refunds whose processing task was lost."""
    with sweep_timed("refunds-pending"):
        return submission.refunds_pending_process()
