"""The task that sends a late approval's reversal. Registered with the worker through
payments.tasks, but kept apart from it: payments.services.reversals queues it, and the sweeps
in payments.tasks import services that import payments.services.reversals."""
from celery import shared_task

from payments.services.reversal_sending import reversal_submit


@shared_task(name="payments.tasks.reversal_submit_task", ignore_result=True)
def reversal_submit_task(reversal_pk: int) -> None:
    """Send a late approval's reversal to the acquirer (queued when it is recorded)."""
    reversal_submit(reversal_pk=reversal_pk)
