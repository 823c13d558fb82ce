"""The sandbox payer's bank's task. Registered with the worker through payments.tasks; sent by
its name (payments.tasks.upi_sandbox_approve_task) by the sandbox acquirer's payer's bank,
payments.acquirer.sandbox.payer, which stands below the services this task runs."""
from celery import shared_task

from payments.sandbox_upi.approvals import upi_sandbox_approve


@shared_task(name="payments.tasks.upi_sandbox_approve_task", ignore_result=True)
def upi_sandbox_approve_task(payment_id: int, attempt: int | None = None) -> None:
    """The sandbox payer's bank approves a UPI payment (success@sandbox) of the hosted attempt
    `attempt` (None: S2S, or a message queued before attempts existed), after the delay."""
    upi_sandbox_approve(payment_id=payment_id, attempt=attempt)
