"""The one table of allowed refund transitions. Nothing else decides whether a status may change."""
from gateway.core.errors import ValidationError
from refunds.models import Refund

S = Refund.Status

TRANSITIONS: dict[str, frozenset[str]] = {
    # The bank's final answer: the money went back (with its reference), or it was refused.
    S.INITIATED: frozenset({S.SUCCESS, S.FAILED}),
    # Final. A failed refund is not retried: its amount is refundable again, by a new refund.
    S.SUCCESS: frozenset(),
    S.FAILED: frozenset(),
}


class InvalidRefundTransition(ValidationError):
    """A status change the table does not allow (typically: the refund is already final)."""

    def __init__(self, current: str, target: str):
        self.current, self.target = current, target
        super().__init__(f"refund is {current} and cannot become {target}", field="status")


def can_transition(current: str, target: str) -> bool:
    return target in TRANSITIONS[current]


def ensure_transition(current: str, target: str) -> None:
    if not can_transition(current, target):
        raise InvalidRefundTransition(current, target)
