"""Thin Celery tasks: take ids, call one service.

Every task of the app is registered with the worker from here. The two that services queue
after a commit live lower, so that their modules import nothing that imports them:
payments.reversal_tasks (queued by payments.services.reversals) and payments.sandbox_upi.tasks
(sent by name by the sandbox acquirer's payer's bank, payments.acquirer.sandbox.payer, which
stands below the services it runs). The sweeps below import those services.
"""
from celery import shared_task

from gateway.core.metrics import sweep_timed

from payments.acquirer.sandbox.settlements import payouts_due
from payments.reversal_tasks import reversal_submit_task
from payments.sandbox_upi.approvals import upi_sandbox_approvals_due
from payments.sandbox_upi.tasks import upi_sandbox_approve_task
from payments.services.acquirer_health import rotation_gauge_set
from payments.services.cutoff import hosted_unanswered_reconcile
from payments.services.expiry import payments_expire_due
from payments.services.idempotency import IDEMPOTENCY_TTL, idempotency_records_delete_expired
from payments.services.txn_claims import txn_claims_delete_expired
from payments.services.hosted.pages import acquirer_pages_reconcile
from payments.services.retention import acquirer_notices_delete_old, sandbox_calls_delete_old
from payments.services.reversal_sending import reversals_pending_process
from payments.services.routing import rotation_pairs
from payments.services.upi import upi_answers_follow, upi_unanswered_reconcile

__all__ = ["acquirer_notices_purge_task", "acquirer_rotation_sweep", "idempotency_records_cleanup", "payments_expire_sweep", "reversal_submit_task", "reversals_pending_sweep",
           "sandbox_calls_purge_task", "sandbox_payouts_task", "upi_sandbox_approve_task"]


@shared_task(name="payments.tasks.payments_expire_sweep", ignore_result=True)
def payments_expire_sweep() -> int:
    # First, UPI pay requests and hosted steps cut off mid-call are asked about, and the
    # sandbox payer's bank finishes the approvals whose task was lost (nothing to find with any
    # other acquirer), so they end as the payer was told rather than being expired by the same sweep.
    # A final answer a killed process recorded but never acted on is acted on first: the bank's
    # decline (or approval) wins over the deadline.
    with sweep_timed("payments-expire"):
        upi_answers_follow()
        upi_unanswered_reconcile()
        hosted_unanswered_reconcile()
        acquirer_pages_reconcile()
        upi_sandbox_approvals_due()
        return payments_expire_due()


@shared_task(name="payments.tasks.acquirer_rotation_sweep", ignore_result=True)
def acquirer_rotation_sweep() -> int:
    """Sets the out-of-rotation gauge of every acquirer and method this deployment routes
    (its one writer: docs/decisions.md D24); reads health only, never takes a probe."""
    with sweep_timed("acquirer-rotation"):
        return rotation_gauge_set(rotation_pairs())


@shared_task(name="payments.tasks.idempotency_records_cleanup", ignore_result=True)
def idempotency_records_cleanup() -> int:
    # The merchantTxnId claims go with the keys: a day after their lease, a payment (or nothing)
    # answers for the merchantTxnId.
    return idempotency_records_delete_expired() + txn_claims_delete_expired(keep=IDEMPOTENCY_TTL)


@shared_task(name="payments.tasks.reversals_pending_sweep", ignore_result=True)
def reversals_pending_sweep() -> int:
    """The beat's safety net: sends the reversals a lost message, a dead worker or an
    acquirer error left PENDING."""
    with sweep_timed("reversals-pending"):
        return reversals_pending_process()


@shared_task(name="payments.tasks.sandbox_calls_purge_task", ignore_result=True)
def sandbox_calls_purge_task() -> int:
    """Delete the sandbox acquirer's call ledger past its retention (payments.services.retention)."""
    return sandbox_calls_delete_old()


@shared_task(name="payments.tasks.acquirer_notices_purge_task", ignore_result=True)
def acquirer_notices_purge_task() -> int:
    """Delete the processor's webhooks as received past their retention (payments.services.retention)."""
    return acquirer_notices_delete_old()


@shared_task(name="payments.tasks.sandbox_payouts_task", ignore_result=True)
def sandbox_payouts_task() -> int:
    """Staging: the sandbox pays out its payments T+1 (payments.acquirer.sandbox.settlements);
    nothing unless the sandbox is the configured acquirer."""
    return payouts_due()
