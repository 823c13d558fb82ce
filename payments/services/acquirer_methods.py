"""The hosted checkout's methods the configured acquirer carries, which the places that offer
or accept a method pass down to gateway.platform.methods: a session's creation
(services/hosted/session.py), the checkout's page (checkout/availability.py) and the
PENDING -> PROCESSING transition (services/transitions.py). The platform stands below the
acquirer and is told as an argument, never through a function filled in at start."""
from __future__ import annotations

from payments.acquirer import get_acquirer


def acquirer_methods() -> frozenset[str]:
    """The method codes the acquirer carries (Acquirer.methods), asked at each use, so a change
    of acquirer takes effect at once."""
    return frozenset(get_acquirer().methods)
