"""What the sandbox's payer does with a UPI pay request the sandbox acquirer answered PENDING
(SandboxAcquirer.upi_pending; CONTRACT.md, Sandbox):

- success@sandbox: approved after SANDBOX_UPI_SUCCESS_DELAY_SECONDS by a queued task (and by
  the payments sweep, should that message be lost), and the payment's deadline moves past that
  approval so it cannot expire first;
- timeout@sandbox: never approved; the payment expires at min(now +
  SANDBOX_UPI_TIMEOUT_SECONDS, its own expiry).
"""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models.functions import Now
from django.utils import timezone

from gateway.core.broker import tasks_publish
from payments.acquirer.sandbox.acquirer import UPI_SUCCESS_VPA, UPI_TIMEOUT_VPA
from payments.models import Payment
from payments.sandbox_upi.tasks import upi_sandbox_approve_task

S = Payment.Status

# How long past the approval's delay a payer-approved payment is kept open: the approval task
# runs at the delay; should its message be lost the payments sweep (every second, a second of
# slack) approves it, before it expires anything. A minute covers both with room for a busy
# worker.
APPROVAL_MARGIN = timedelta(seconds=60)


def upi_sandbox_request_pending(*, payment: Payment, vpa: str) -> None:
    """Act on `vpa`'s pending pay request for `payment` as the sandbox's payer would (the
    module's docstring). Never raises for the broker: the payments sweep stands in for a lost
    message."""
    if vpa == UPI_SUCCESS_VPA:
        delay = float(settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS)
        _keep_open_for_approval(payment, vpa, delay)
        attempt = payment.attempt if payment.flow == Payment.Flow.HOSTED else None
        # One bounded attempt, never raising (gateway.core.broker): the payments sweep finishes it otherwise.
        tasks_publish([(upi_sandbox_approve_task, (payment.pk,), delay, {"attempt": attempt})],
                      what=f"upi_sandbox_approve_task of payment {payment.pk}",
                      fallback="the payments sweep will do it")
    elif vpa == UPI_TIMEOUT_VPA:
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
