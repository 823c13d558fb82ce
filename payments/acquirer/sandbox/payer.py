"""The sandbox's payer's bank receiving a UPI pay request the sandbox answered PENDING
(SandboxAcquirer.upi_pay; CONTRACT.md, Sandbox), as a real acquirer passes a request on to the
payer's bank and answers later on its own:

- success@sandbox: approved SANDBOX_UPI_SUCCESS_DELAY_SECONDS later by the payer's bank's own
  task, sent here by its name (payments.sandbox_upi.tasks: it records the approval through the
  payment services, which stand above this package, so it is never imported from here), and by
  the payments sweep should that message be lost (payments.sandbox_upi.approvals); the
  payment's deadline moves past that approval so it cannot expire first;
- timeout@sandbox: never approved; the payment expires at min(now +
  SANDBOX_UPI_TIMEOUT_SECONDS, its own expiry).
"""
from __future__ import annotations

from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db.models.functions import Now
from django.utils import timezone

from gateway.core.broker import tasks_publish
from payments.models import Payment

S = Payment.Status

# The payer's bank's approval task (payments.sandbox_upi.tasks, registered with the worker by
# payments.tasks), sent by its name: this package stands below the services it calls.
APPROVE_TASK = "payments.tasks.upi_sandbox_approve_task"

# How long past the approval's delay a payer-approved payment is kept open: the approval task
# runs at the delay; should its message be lost the payments sweep (every second, a second of
# slack) approves it, before it expires anything. A minute covers both with room for a busy
# worker.
APPROVAL_MARGIN = timedelta(seconds=60)


def approval_send(*, payment: Payment, vpa: str) -> None:
    """success@sandbox: the payer approves `vpa`'s request for `payment`; the approval lands
    SANDBOX_UPI_SUCCESS_DELAY_SECONDS later (the module's docstring). Never raises for the
    broker: the payments sweep stands in for a lost message. Holds no lock: a conditional
    update only."""
    delay = float(settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS)
    _keep_open_for_approval(payment, vpa, delay)
    attempt = payment.attempt if payment.flow == Payment.Flow.HOSTED else None
    # One bounded attempt, never raising (gateway.core.broker): the payments sweep finishes it otherwise.
    tasks_publish([(current_app.signature(APPROVE_TASK), (payment.pk,), delay, {"attempt": attempt})],
                  what=f"upi_sandbox_approve_task of payment {payment.pk}",
                  fallback="the payments sweep will do it")


def timeout_set(*, payment: Payment) -> None:
    """timeout@sandbox: never approved; the payment's deadline moves to now +
    SANDBOX_UPI_TIMEOUT_SECONDS when that is earlier. Holds no lock: a conditional update only."""
    deadline = timezone.now() + timedelta(seconds=settings.SANDBOX_UPI_TIMEOUT_SECONDS)
    if deadline < payment.expires_at:
        # Only ever earlier, and only while it is open; the expiry sweep does the rest.
        if Payment.objects.filter(pk=payment.pk, status=S.PROCESSING).update(expires_at=deadline,
                                                                             updated_at=Now()):
            payment.expires_at = deadline


def _keep_open_for_approval(payment: Payment, vpa: str, delay: float) -> None:
    """The payer approved; the approval lands `delay` seconds later. A deadline inside that
    window would expire a payment the customer paid (CONTRACT.md: success@sandbox gives
    SUCCESS), so it moves to at least now + delay + APPROVAL_MARGIN."""
    floor = timezone.now() + timedelta(seconds=delay) + APPROVAL_MARGIN
    # Only ever later, and only while it is open and this payer's: a conditional update, so a
    # payment that went final (or was never this payer's) is left as it is.
    if Payment.objects.filter(pk=payment.pk, status=S.PROCESSING, payer_vpa=vpa,
                              expires_at__lt=floor).update(expires_at=floor, updated_at=Now()):
        payment.expires_at = floor
