"""The hosted checkout's methods the acquirers of a merchant's routes carry, which the places that offer
or accept a method pass down to gateway.platform.methods: a session's creation
(services/hosted/session.py), the checkout's page (checkout/availability.py) and the
PENDING -> PROCESSING transition (services/transitions.py). The platform stands below the
acquirer and is told as an argument, never through a function filled in at start."""
from __future__ import annotations

from django.conf import settings

from gateway.platform.methods import CODES
from payments.acquirer import acquirer_for, acquirer_named
from payments.acquirer.base import Acquirer
from payments.models import Payment
from payments.services.acquirer_health import out_of_rotation
from payments.services.routing import routes_as_set


def acquirer_methods(merchant_id: int | None = None) -> frozenset[str]:
    """The method codes the merchant's payments can be carried by (Acquirer.methods): each
    method's by the first acquirer of the merchant's route for it as staff set it (the
    configured one without a route; routing.routes_as_set), asked at each use, so a change of
    acquirer or route takes effect at once. No query with one acquirer; with more, one.
    Without a merchant: the configured acquirer's, every route's default.

    With CARD_FORM_MODE=processor (production's default) cards are carried only by an acquirer
    with card fields of its own (Acquirer.card_fields: the number goes from the browser to it),
    never by our card form, which would bring the number to this process."""
    carried = set()
    routes = (routes_as_set(merchant_id, list(CODES)) if merchant_id is not None
              else {code: [settings.GATEWAY_ACQUIRER] for code in CODES})
    for code, names in routes.items():
        acquirer = acquirer_named(names[0])
        if code not in acquirer.methods:
            continue
        if code == "CARD" and settings.CARD_FORM_MODE == "processor" and acquirer.card_fields() is None:
            continue
        carried.add(code)
    return frozenset(carried)


def acquirer_for_method(payment: Payment, method: str) -> Acquirer:
    """The acquirer the payment's `method` would be carried by: the payment's own once it is
    routed (every later call about it goes there: payments.services.routing), else the first of
    the merchant's route for the method (routing.route_for), which the method's start tries
    first. Only reads: the route as staff set it (routes_as_set) and the rotation
    (out_of_rotation), so drawing the page never takes the probe a payment should make
    (route_for would). One query with more than one acquirer enabled, none with one."""
    if payment.acquirer:
        return acquirer_for(payment)
    names = routes_as_set(payment.merchant_id, [method])[method]
    out = {name for name, _ in out_of_rotation([(name, method) for name in names])} if len(names) > 1 else set()
    return acquirer_named(next((name for name in names if name not in out), names[0]))


def method_choices(payment: Payment, method: str) -> dict[str, str]:
    """What the checkout lists, and accepts, for net banking (NB: the banks) or a wallet (WALLET:
    the wallets), code -> name: those of the acquirer the method would be carried by
    (acquirer_for_method), not the configured one's, so a customer never picks a bank or
    wallet the payment's acquirer does not carry."""
    acquirer = acquirer_for_method(payment, method)
    return dict(acquirer.wallets if method == "WALLET" else acquirer.banks)
