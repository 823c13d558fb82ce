"""The tables of allowed status changes of a payment and of a late approval's reversal. Nothing
else decides whether a status may change."""
from gateway.core.errors import ValidationError
from payments.models import Payment, Reversal

S = Payment.Status

TRANSITIONS: dict[str, frozenset[str]] = {
    # Hosted: the customer picks a method (PROCESSING), or cancels (FAILED), or nobody pays in
    # time (EXPIRED).
    S.PENDING: frozenset({S.PROCESSING, S.FAILED, S.EXPIRED}),
    # Both flows: the acquirer's final answer, or the QR / intent / session runs out. Hosted
    # only, back to PENDING: an attempt failed (a declined card, a wrong OTP, a declined UPI,
    # bank or wallet payment) or the customer left a waiting UPI request, and the methods are
    # offered again (CONTRACT.md; payments.services.transitions.payment_attempt_failed).
    S.PROCESSING: frozenset({S.SUCCESS, S.FAILED, S.EXPIRED, S.PENDING}),
    # Final statuses are final: the merchant creates a new payment to try again.
    S.SUCCESS: frozenset(),
    S.FAILED: frozenset(),
    S.EXPIRED: frozenset(),
}


class InvalidTransition(ValidationError):
    """A status change the table does not allow (typically: the payment is already final)."""

    def __init__(self, current: str, target: str):
        self.current, self.target = current, target
        super().__init__(f"payment is {current} and cannot become {target}", field="status")


def can_transition(current: str, target: str) -> bool:
    return target in TRANSITIONS[current]


def ensure_transition(current: str, target: str) -> None:
    if not can_transition(current, target):
        raise InvalidTransition(current, target)


# A late approval's reversal (payments.models.Reversal, payments.services.reversals).
R = Reversal.Status

REVERSAL_TRANSITIONS: dict[str, frozenset[str]] = {
    # The acquirer's answer: the money went back (with its reference), or it refused. An error
    # is no answer: the reversal stays PENDING and is sent again, unless a person gave the money
    # back another way meanwhile (the console's "Needs attention" queue).
    R.PENDING: frozenset({R.REVERSED, R.FAILED, R.SETTLED}),
    # Refused by the acquirer: waits in the console's queue for a person to give it back.
    R.FAILED: frozenset({R.SETTLED}),
    # Final.
    R.REVERSED: frozenset(),
    R.SETTLED: frozenset(),
}


class InvalidReversalTransition(ValidationError):
    """A reversal status change REVERSAL_TRANSITIONS does not allow (it is final already)."""

    def __init__(self, current: str, target: str):
        self.current, self.target = current, target
        super().__init__(f"reversal is {current} and cannot become {target}", field="status")


def ensure_reversal_transition(current: str, target: str) -> None:
    if target not in REVERSAL_TRANSITIONS[current]:
        raise InvalidReversalTransition(current, target)
