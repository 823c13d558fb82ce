"""An acquirer's word about one of our refunds (its webhook, read as a RefundNotice by the
acquirer's own package), applied through the refund's own transitions (refunds.transitions), as
refund_submit's answers are. The inbound door (gateway/inbound/pipeline.py) calls it."""
from __future__ import annotations

from typing import Callable

from payments.acquirer.base import Outcome, RefundNotice
from payments.models import Payment
from refunds.models import Refund
from refunds.state import InvalidRefundTransition
from refunds.transitions import refund_mark_failed, refund_mark_processed


def refund_notice_apply(*, payment: Payment, matches: Callable[[str], bool], notice: RefundNotice,
                        source: str) -> tuple[bool, str]:
    """Finalise the refund of `payment` whose refundId `matches` the notice: SUCCESS with the
    notice's reference when it is APPROVED, FAILED with its message when DECLINED. A notice whose
    amount (paise) differs from the refund's changes nothing. A refund already final stays as it
    is (the transitions table refuses): the same word twice counts as applied, the opposite word
    as not. Returns whether it was applied, and what happened, for the notice's record."""
    answer = notice.answer
    if answer is None or answer.outcome not in (Outcome.APPROVED, Outcome.DECLINED):
        return False, "refund not final yet"
    # A payment has a handful of refunds at most.
    refund = next((refund for refund in Refund.objects.filter(payment=payment) if matches(refund.refund_id)), None)
    if refund is None:
        return False, "no refund of this gateway has that refund id"
    if notice.amount != refund.amount:
        return False, "amount differs from the refund's: not applied"
    succeeded = answer.outcome == Outcome.APPROVED
    detail = {"source": source, **answer.raw}
    before = refund.status
    try:
        if succeeded:
            refund = refund_mark_processed(refund_pk=refund.pk, bank_reference=answer.reference, detail=detail)
        else:
            refund = refund_mark_failed(refund_pk=refund.pk, reason=answer.message or "refused by the acquirer",
                                        detail=detail)
    except InvalidRefundTransition:
        # Final already: the same word again changes nothing; the opposite word is not applied
        # over it, and is kept as not applied so that someone looks.
        refund.refresh_from_db(fields=["status"])
        wanted = Refund.Status.SUCCESS if succeeded else Refund.Status.FAILED
        if refund.status != wanted:
            return False, f"refund {refund.refund_id} is {refund.status}: a {wanted} notice not applied"
    return True, f"refund {refund.refund_id}: {before} -> {refund.status}"
