"""The hosted checkout's methods the configured acquirer carries, which the places that offer
or accept a method pass down to gateway.platform.methods: a session's creation
(services/hosted/session.py), the checkout's page (checkout/availability.py) and the
PENDING -> PROCESSING transition (services/transitions.py). The platform stands below the
acquirer and is told as an argument, never through a function filled in at start."""
from __future__ import annotations

from django.conf import settings

from payments.acquirer import get_acquirer


def acquirer_methods() -> frozenset[str]:
    """The method codes the acquirer carries (Acquirer.methods), asked at each use, so a change
    of acquirer takes effect at once.

    With CARD_FORM_MODE=processor (production's default) cards are carried only by an acquirer
    with card fields of its own (Acquirer.card_fields: the number goes from the browser to it),
    never by our card form, which would bring the number to this process."""
    acquirer = get_acquirer()
    methods = frozenset(acquirer.methods)
    if settings.CARD_FORM_MODE == "processor" and acquirer.card_fields() is None:
        methods -= {"CARD"}
    return methods
