"""The table of allowed status changes of a webhook delivery. Nothing else decides whether a
delivery's status may change (webhooks.delivery records attempts' results; webhooks.services
resends)."""
from gateway.core.errors import ValidationError
from webhooks.models import WebhookDelivery

D = WebhookDelivery.Status

TRANSITIONS: dict[str, frozenset[str]] = {
    # Not attempted yet (or resent): an attempt's result decides. A 2xx delivers it; a failure
    # schedules the next attempt (FAILED) or, with the schedule exhausted, ends it (DEAD).
    # Resent while pending: due now again, with a fresh retry cycle.
    D.PENDING: frozenset({D.DELIVERED, D.FAILED, D.DEAD, D.PENDING}),
    # The last attempt failed and another is due: the same as PENDING.
    D.FAILED: frozenset({D.DELIVERED, D.FAILED, D.DEAD, D.PENDING}),
    # The schedule is exhausted. A person may resend it. An attempt whose claim ran out before
    # its result was recorded (a slow receiver, a stalled worker) may still bring a 2xx: the
    # merchant has it, so it is DELIVERED.
    D.DEAD: frozenset({D.DELIVERED, D.PENDING}),
    # The merchant acknowledged it. Only a person's resend sends it again; a late failure of
    # an overlapping attempt changes nothing.
    D.DELIVERED: frozenset({D.PENDING}),
}


class InvalidDeliveryTransition(ValidationError):
    """A delivery status change the table does not allow (typically: it was delivered already)."""

    def __init__(self, current: str, target: str):
        self.current, self.target = current, target
        super().__init__(f"delivery is {current} and cannot become {target}", field="status")


def can_transition(current: str, target: str) -> bool:
    return target in TRANSITIONS[current]


def ensure_transition(current: str, target: str) -> None:
    if not can_transition(current, target):
        raise InvalidDeliveryTransition(current, target)
