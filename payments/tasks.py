"""Thin Celery tasks: take ids, call one service."""
from celery import shared_task

from payments.services.expiry import payments_expire_due


@shared_task(name="payments.tasks.payments_expire_sweep", ignore_result=True)
def payments_expire_sweep() -> int:
    # First, UPI pay requests and hosted steps cut off mid-call are asked about, and sandbox
    # approvals whose task was lost are finished, so they end as the payer was told rather than
    # being expired by the same sweep.
    from payments.services.cutoff import hosted_unanswered_reconcile
    from payments.services.upi import upi_sandbox_approvals_due, upi_unanswered_reconcile

    upi_unanswered_reconcile()
    hosted_unanswered_reconcile()
    upi_sandbox_approvals_due()
    return payments_expire_due()


@shared_task(name="payments.tasks.idempotency_records_cleanup", ignore_result=True)
def idempotency_records_cleanup() -> int:
    from payments.services.idempotency import idempotency_records_delete_expired

    return idempotency_records_delete_expired()


@shared_task(name="payments.tasks.upi_sandbox_approve_task", ignore_result=True)
def upi_sandbox_approve_task(payment_id: int, attempt: int | None = None) -> None:
    """The sandbox payer's bank approves a UPI payment (success@sandbox) of the hosted attempt
    `attempt` (None: S2S, or a message queued before attempts existed), after the delay."""
    from payments.services.upi import upi_sandbox_approve

    upi_sandbox_approve(payment_id=payment_id, attempt=attempt)


@shared_task(name="payments.tasks.reversal_submit_task", ignore_result=True)
def reversal_submit_task(reversal_pk: int) -> None:
    """Send a late approval's reversal to the acquirer (queued when it is recorded)."""
    from payments.services.reversals import reversal_submit

    reversal_submit(reversal_pk=reversal_pk)


@shared_task(name="payments.tasks.reversals_pending_sweep", ignore_result=True)
def reversals_pending_sweep() -> int:
    """The beat's safety net: sends the reversals a lost message, a dead worker or an
    acquirer error left PENDING."""
    from payments.services.reversals import reversals_pending_process

    return reversals_pending_process()
