"""What a Cashfree payment attempt or refund says, as the protocol's answer: the one reading of
Cashfree's status, used by the status query (acquirer.py) and by the webhooks (notices.py)
alike, so that a payment or refund stores the same reference whichever of the two the gateway
hears first.

- A payment's reference is the bank's (`bank_reference`, the UTR / RRN), else Cashfree's
  `cf_payment_id`.
- A refund's reference is the bank's refund reference (`refund_arn`, the ARN the customer's
  bank knows), else Cashfree's `cf_refund_id`, else our refund id as Cashfree knows it.
- "The newest attempt" of an order is the one paid last (`payment_time`), and between two of
  the same time the larger `cf_payment_id`, read as a number (Cashfree's ids grow; as text,
  "9" would come after "10").
"""
from __future__ import annotations

from payments.acquirer.base import AcquirerAnswer, AcquirerUnavailable, Outcome

from .client import Payment, Refund

# Cashfree's payment_status values, as the gateway reads them.
APPROVED = frozenset({"SUCCESS"})
DECLINED = frozenset({"FAILED", "USER_DROPPED", "CANCELLED", "VOID"})  # any other (PENDING, NOT_ATTEMPTED): not final
REFUND_FINAL = frozenset({"SUCCESS", "CANCELLED"})


class NotFinal(AcquirerUnavailable):
    """Cashfree's payment is not final yet (PENDING, NOT_ATTEMPTED): ask again later."""


def payment_reference(found: Payment) -> str:
    return (found.bank_reference or found.cf_payment_id)[:40]


def payment_answer(found: Payment) -> AcquirerAnswer:
    """A Cashfree payment attempt's status as the protocol's answer. One not final yet is
    NotFinal (an AcquirerUnavailable): the gateway asks again later and meanwhile decides
    nothing."""
    raw = {"cf_payment_id": found.cf_payment_id, "payment_status": found.status,
           "payment_group": found.payment_group}
    if found.status in APPROVED:
        return AcquirerAnswer(Outcome.APPROVED, reference=payment_reference(found), message=found.message[:200],
                              raw=raw)
    if found.status in DECLINED:
        return AcquirerAnswer(Outcome.DECLINED, message=(found.message or found.status.lower())[:200],
                              raw={**raw, "error_code": found.error_code})
    raise NotFinal(f"Cashfree payment {found.cf_payment_id} is {found.status or 'unknown'}, not final yet")


def _number(cf_payment_id: str) -> int:
    return int(cf_payment_id) if cf_payment_id.isdigit() else -1


def newest(found: list[Payment]) -> Payment | None:
    """The newest attempt among `found` (the module's docstring); None when there is none."""
    return max(found, key=lambda p: (str(p.raw.get("payment_time") or ""), _number(p.cf_payment_id)), default=None)


def order_answer(found: list[Payment], *, among: list[Payment] | None = None) -> AcquirerAnswer:
    """Where an order stands, from every attempt on it (`found`): an approved attempt wins (money
    moved, whichever attempt); else the newest of `among` (default: all of them). NotFinal
    when that one is not final; LookupError when there is none."""
    approved = [p for p in found if p.status in APPROVED]
    if approved:
        return payment_answer(approved[0])
    latest = newest(found if among is None else among)
    if latest is None:
        raise LookupError("no such attempt")
    return payment_answer(latest)


def refund_reference(refund: Refund) -> str:
    return (refund.arn or refund.cf_refund_id or refund.refund_id)[:40]


def refund_answer(refund: Refund) -> AcquirerAnswer:
    raw = {"cf_refund_id": refund.cf_refund_id, "refund_status": refund.status, "refund_arn": refund.arn}
    reference = refund_reference(refund)
    if refund.status == "SUCCESS":
        return AcquirerAnswer(Outcome.APPROVED, reference=reference, raw=raw)
    if refund.status == "CANCELLED":
        message = str(refund.raw.get("status_description") or "refund cancelled by Cashfree")[:200]
        return AcquirerAnswer(Outcome.DECLINED, reference=reference, message=message, raw=raw)
    return AcquirerAnswer(Outcome.PENDING, reference=reference, raw=raw)
