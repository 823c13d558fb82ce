"""The acquirer approved a UPI pay request: what that means for the payment, whoever reports it
(upi_pay's or the status query's own answer, the sandbox's payer's bank, a real acquirer's
callback)."""
from __future__ import annotations

from payments.models import Payment
from payments.services.acquirer_answers import attempt_left
from payments.services.reversals import payment_late_approval_handle
from payments.services.transitions import payment_mark_succeeded
from payments.state import InvalidTransition


def upi_approval_record(*, payment_id: int, bank_rrn: str, step: str, attempt: int | None = None) -> Payment | None:
    """PROCESSING -> SUCCESS with the approval's RRN, for the hosted attempt `attempt` (None:
    S2S). Returns the payment, or None when it could not take the approval: approved twice
    (the first answer stands), or expired, failed or (hosted) an attempt the customer left,
    in which case the money moved for a payment the merchant was not told about and is given
    back (payments.services.reversals). Call it outside any transaction."""
    try:
        return payment_mark_succeeded(payment_id=payment_id, bank_rrn=bank_rrn, attempt=attempt,
                                      detail={"source": "acquirer", "bankRrn": bank_rrn,
                                              **({"attempt": attempt} if attempt is not None else {})})
    except InvalidTransition:
        payment_late_approval_handle(payment_id=payment_id, step=step, bank_rrn=bank_rrn,
                                     abandoned=attempt_left(payment_id=payment_id, attempt=attempt))
        return None
