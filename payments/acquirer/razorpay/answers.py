"""What a Razorpay payment or refund says, as the protocol's answer: the one reading of Razorpay's
statuses, used by the status query (acquirer.py) and the webhooks (notices.py) alike, so that a
payment or refund stores the same reference whichever of the two the gateway hears first.

- A payment is approved once Razorpay has captured it (`captured`; `refunded` was captured
  before). `authorized` is not final: the money is held, not taken, and Razorpay refunds an
  uncaptured payment by itself after a few days; the adapter captures it (acquirer.py) before it
  answers. `failed` is a decline; `created` not final.
- A payment's reference is the bank's (acquirer_data.rrn, else bank_transaction_id), else
  Razorpay's payment id.
- A refund's reference is the bank's ARN (acquirer_data.arn), else Razorpay's refund id.
- "The newest attempt" of an order is the one created last (`created_at`), and between two of the
  same second the larger id (Razorpay's ids are time-ordered base62).
"""
from __future__ import annotations

from payments.acquirer.base import AcquirerAnswer, AcquirerUnavailable, Outcome

from .client import Payment, Refund

APPROVED = frozenset({"captured", "refunded"})
DECLINED = frozenset({"failed"})
AUTHORIZED = "authorized"
REFUND_FINAL = frozenset({"processed", "failed"})


class NotFinal(AcquirerUnavailable):
    """Razorpay's payment is not final yet (created, authorized): ask again later."""


def payment_reference(found: Payment) -> str:
    return (found.rrn or found.id)[:40]


def payment_answer(found: Payment) -> AcquirerAnswer:
    raw = {"razorpay_payment_id": found.id, "status": found.status, "method": found.method}
    if found.status in APPROVED:
        return AcquirerAnswer(Outcome.APPROVED, reference=payment_reference(found), raw=raw)
    if found.status in DECLINED:
        message = found.error_description or found.error_code or "declined"
        return AcquirerAnswer(Outcome.DECLINED, message=message[:200], raw={**raw, "error_code": found.error_code})
    raise NotFinal(f"Razorpay payment {found.id} is {found.status or 'unknown'}, not final yet")


def newest(found: list[Payment]) -> Payment | None:
    return max(found, key=lambda p: (p.created_at, p.id), default=None)


def order_answer(found: list[Payment], *, among: list[Payment] | None = None) -> AcquirerAnswer:
    """Where an order stands from every payment on it: a captured one wins (money moved,
    whichever attempt); else the newest of `among` (default: all). NotFinal when that one is not
    final; LookupError when there is none."""
    approved = [p for p in found if p.status in APPROVED]
    if approved:
        return payment_answer(min(approved, key=lambda p: (p.created_at, p.id)))
    latest = newest(found if among is None else among)
    if latest is None:
        raise LookupError("no such attempt")
    return payment_answer(latest)


def refund_reference(refund: Refund) -> str:
    return (refund.arn or refund.id)[:40]


def refund_answer(refund: Refund) -> AcquirerAnswer:
    raw = {"razorpay_refund_id": refund.id, "status": refund.status, "arn": refund.arn}
    reference = refund_reference(refund)
    if refund.status == "processed":
        return AcquirerAnswer(Outcome.APPROVED, reference=reference, raw=raw)
    if refund.status == "failed":
        return AcquirerAnswer(Outcome.DECLINED, reference=reference, message="refund failed at Razorpay", raw=raw)
    return AcquirerAnswer(Outcome.PENDING, reference=reference, raw=raw)
