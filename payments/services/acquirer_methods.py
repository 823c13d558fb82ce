"""The hosted checkout's methods the configured acquirer carries, which the three places that
offer or accept a method pass down to gateway.platform.methods: a session's creation
(services/hosted/session.py), the checkout's methods page (checkout/display.py) and the
PENDING -> PROCESSING transition (services/transitions.py). The platform stands below the
acquirer and is told as an argument, never through a function filled in at start."""
from __future__ import annotations

from gateway.platform.methods import CODES
from payments.acquirer import get_acquirer


def acquirer_methods() -> frozenset[str]:
    """The method codes the acquirer carries (Acquirer.methods), asked at each use, so a change
    of acquirer takes effect at once."""
    # The protocol's `methods`; an acquirer that declares none (the sandbox today) carries every
    # method, as payments.acquirer.base says of the member.
    return frozenset(getattr(get_acquirer(), "methods", CODES))
