"""The sandbox payer's bank approving UPI pay requests: success@sandbox is approved
SANDBOX_UPI_SUCCESS_DELAY_SECONDS after it was made, by the task payments.sandbox_upi.tasks
(which the sandbox acquirer's payer's bank, payments.acquirer.sandbox.payer, sends by name), or
by the payments sweep should that message be lost (upi_sandbox_approvals_due, called by
payments.tasks). It records the approval through the payment services, as a real acquirer's
answer arrives: from above them, so the acquirer below never imports it. An approval that
finds the payment EXPIRED or FAILED is kept with its RRN and reversed
(payments.services.upi_approval)."""
from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from payments.acquirer.sandbox.acquirer import UPI_SUCCESS_VPA, new_rrn, upi_request_cancelled
from payments.models import Payment, PaymentEvent
from payments.selectors import upi_claimed_open_ids
from payments.services.upi_approval import upi_approval_record

logger = logging.getLogger("payments.upi")

S = Payment.Status

# The result the sandbox acquirer gives a pay request awaiting its payer's approval
# (SandboxAcquirer.upi_pay); the sweep looks for it to finish an approval whose task was lost.
AWAITING_APPROVAL = "awaiting approval"


def upi_sandbox_approve(*, payment_id: int, attempt: int | None = None) -> Payment | None:
    """The sandbox payer's bank approves the pay request of the payment's attempt `attempt`
    (default: its current one): PROCESSING -> SUCCESS with a fresh RRN. A request the gateway
    cancelled (the customer changed method) is never approved; one approved for an attempt
    the customer left is kept for reversal. Returns None (and changes nothing) when the
    payment is final already. Safe to run more than once."""
    if attempt is not None and upi_request_cancelled(payment_id=payment_id, attempt=attempt):
        return None
    return upi_approval_record(payment_id=payment_id, bank_rrn=new_rrn(), step="upi_sandbox_approve", attempt=attempt)


def upi_sandbox_approvals_due(*, now=None, limit: int = 500) -> int:
    """Finish sandbox approvals whose task was lost (broker down, message dropped): every
    PROCESSING payment paid by success@sandbox at least the delay ago. Returns how many
    succeeded. The payments sweep runs it before expiring, so a lost task still ends in SUCCESS."""
    now = now or timezone.now()
    # A second of slack, so the sweep does not race the task it is standing in for.
    cutoff = now - timedelta(seconds=float(settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS) + 1)
    awaiting = PaymentEvent.objects.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__result=AWAITING_APPROVAL,
                                           created_at__lte=cutoff)
    # The claimed open UPI payments first (few), then that payer's among them, and their events.
    due = list(
        Payment.objects.filter(pk__in=upi_claimed_open_ids(), status=S.PROCESSING, payer_vpa=UPI_SUCCESS_VPA,
                               events__in=awaiting)
        .order_by("pk").values_list("pk", "flow", "attempt").distinct()[:limit]
    )
    approved = 0
    for payment_id, flow, attempt in due:
        # Hosted: only the current attempt's request, never one the customer left before it.
        if flow == Payment.Flow.HOSTED and not awaiting.filter(payment_id=payment_id, detail__attempt=attempt).exists():
            continue
        try:
            approved += upi_sandbox_approve(payment_id=payment_id,
                                            attempt=attempt if flow == Payment.Flow.HOSTED else None) is not None
        except Exception:  # noqa: BLE001 - one bad row must not stop the others, nor the expiry after
            logger.exception("sandbox approval of payment %s failed", payment_id)
    return approved
