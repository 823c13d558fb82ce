"""The one table of allowed dispute transitions. Nothing else decides whether a dispute's status
may change (refunds.disputes.transitions applies it).

The statuses are the gateway's own (payments.acquirer.base.DISPUTE_STATUSES); each acquirer's
package maps its processor's statuses onto them. A dispute is born in whatever status the
processor first states (a dispute the sweep finds late may already be decided): that is its
opening, not a transition.
"""
from gateway.core.errors import ValidationError
from refunds.models import Dispute

S = Dispute.Status

TRANSITIONS: dict[str, frozenset[str]] = {
    # Raised, the processor's own move next: it asks the merchant, or decides without them.
    S.OPEN: frozenset({S.NEEDS_RESPONSE, S.UNDER_REVIEW, S.WON, S.LOST, S.ACCEPTED}),
    # The merchant's move: evidence (under review) or accept; or the deadline passes (lost), or
    # the processor decides anyway.
    S.NEEDS_RESPONSE: frozenset({S.UNDER_REVIEW, S.WON, S.LOST, S.ACCEPTED}),
    # Evidence in: decided, or more is asked for (insufficient evidence), or accepted after all.
    S.UNDER_REVIEW: frozenset({S.NEEDS_RESPONSE, S.WON, S.LOST, S.ACCEPTED}),
    # Won can be taken further by the customer's bank (pre-arbitration, arbitration): answered
    # again, or lost there.
    S.WON: frozenset({S.NEEDS_RESPONSE, S.UNDER_REVIEW, S.LOST}),
    # Lost can be reversed in arbitration (Cashfree's DISPUTE_REVERSAL), or the merchant's
    # pre-arbitration asks for an answer again.
    S.LOST: frozenset({S.NEEDS_RESPONSE, S.UNDER_REVIEW, S.WON}),
    # The merchant gave the money back of their own accord: nothing follows.
    S.ACCEPTED: frozenset(),
}


class InvalidDisputeTransition(ValidationError):
    """A status change the table does not allow (an accepted dispute moving, say)."""

    def __init__(self, current: str, target: str):
        self.current, self.target = current, target
        super().__init__(f"dispute is {current} and cannot become {target}", field="status")


def can_transition(current: str, target: str) -> bool:
    return target in TRANSITIONS[current]


def ensure_transition(current: str, target: str) -> None:
    if not can_transition(current, target):
        raise InvalidDisputeTransition(current, target)
