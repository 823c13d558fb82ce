"""Which acquirer takes a payment, and the one safe failover (issue 33; docs/decisions.md, "Two
acquirers: routing and safe failover").

- A payment's acquirer is chosen once, when its first method opens an order at an acquirer:
  the merchant's route for that method (payments.models.AcquirerRoute: an ordered list set by
  staff, the method's own row, else the merchant's ANY row, else the configured acquirer),
  keeping only acquirers this deployment enables (GATEWAY_ACQUIRERS) that carry the method,
  those out of rotation for it (payments.services.acquirer_health) tried last.
  It is written on the payment (Payment.acquirer) before the call, so that whatever that
  acquirer says later is the payment's; every later call about the payment goes to it
  (payments.acquirer.acquirer_for).
- Failover: only at that first call, only for a call whose answer is what the customer acts on
  next (a UPI intent link, a 3-D Secure or bank page: until it reaches the customer nothing can
  be paid at the first acquirer), only on a technical failure (AcquirerUnavailable: refused
  connection, timeout, 5xx, a 429 past its time; AcquirerError: credentials, an unreadable
  answer), and at most once: the second acquirer's failure is the attempt's. Never on
  AcquirerRefused or a DECLINED answer (the bank's or processor's answer), never for a payment
  already routed (its customer may have a link of the first acquirer), never for a UPI collect
  request (a timed-out request may already be in the payer's app).
- The route taken, and why, is returned for the payment's story (the step's ACQUIRER event:
  `acquirer`, and `route` with what failed before it), where the console shows it. That record
  is also what makes an approval from the acquirer failed over from believable enough to be
  confirmed and reversed there (failed_over_from; payments.services.notices).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from django.conf import settings

from payments.acquirer import acquirer_for, acquirer_named, enabled
from gateway.core.metrics import acquirer_failovers
from payments.acquirer.base import Acquirer, AcquirerAnswer, AcquirerError, AcquirerRefused, AcquirerUnavailable
from payments.models import AcquirerRoute, Payment, PaymentEvent
from payments.services.acquirer_health import health_record, in_rotation_first

logger = logging.getLogger("payments.routing")

T = TypeVar("T")
MAX_ACQUIRERS_PER_ATTEMPT = 2  # the chosen one and one failover: never twice


@dataclass(frozen=True)
class Routed(Generic[T]):
    answer: T
    acquirer: str
    story: dict  # for the step's event: {"acquirer": ..., "route": {...}}; {} when routed before


def route_check(method: str | None, names: list[str]) -> None:
    """A route as staff set it (the console's Acquirer routes page): at least one name, each
    enabled here (GATEWAY_ACQUIRERS) and carrying `method` (unless ANY or not known yet), none
    twice. ValueError saying what is wrong."""
    if not names:
        raise ValueError("Name at least one acquirer.")
    unknown = [name for name in names if name not in enabled()]
    if unknown:
        raise ValueError(f"Not enabled here: {', '.join(unknown)} (GATEWAY_ACQUIRERS: {', '.join(enabled())}).")
    if len(set(names)) != len(names):
        raise ValueError("An acquirer is named twice.")
    if method and method != AcquirerRoute.ANY:
        lacking = [name for name in names if method not in acquirer_named(name).methods]
        if lacking:
            raise ValueError(f"{', '.join(lacking)} does not carry {method}.")


def route_for(merchant_id: int, method: str) -> list[str]:
    """The acquirers a payment of `method` tries, in order (the module's docstring). A deployment
    with one acquirer has nothing to route: no query (an S2S creation stays two statements,
    docs/decisions.md D14); with more, one SELECT of the merchant's routes."""
    usable = routes_as_set(merchant_id, [method], log_unusable=True)[method]
    return in_rotation_first(usable, method) if len(usable) > 1 else usable


def routes_as_set(merchant_id: int, methods: list[str], *, log_unusable: bool = False) -> dict[str, list[str]]:
    """Each of `methods`' route as staff set it (the acquirers enabled here that carry it, in
    their order), before health reorders it: what route_for starts from, and what the checkout
    reads to tell whether a method is degraded on every acquirer that would take it, without
    taking a probe. No query with one acquirer; with more, one."""
    if len(enabled()) == 1:
        return {method: [settings.GATEWAY_ACQUIRER] for method in methods}
    rows = {row.method: row for row in AcquirerRoute.objects.filter(merchant_id=merchant_id,
                                                                    method__in=[*methods, AcquirerRoute.ANY])}
    routes = {}
    for method in methods:
        row = rows.get(method) or rows.get(AcquirerRoute.ANY)
        names = [name for name in (row.names if row else []) if name in enabled()]
        usable = [name for name in dict.fromkeys(names) if method in acquirer_named(name).methods]
        if log_unusable and row is not None and len(usable) < len(row.names):
            logger.warning("merchant %s route %s names acquirers not enabled or not carrying it: %s",
                           merchant_id, method, ", ".join(n for n in row.names if n not in usable))
        routes[method] = usable or [settings.GATEWAY_ACQUIRER]
    return routes


def rotation_pairs() -> list[tuple[str, str]]:
    """Every (acquirer, method) this deployment may route: what the rotation sweep reads."""
    return [(name, method) for name in enabled() for method in acquirer_named(name).methods]


def merchant_acquirers(merchant_id: int) -> list[str]:
    """Every acquirer any of the merchant's routes may send a payment to (the configured one
    when it has none), in one query."""
    if len(enabled()) == 1:
        return [settings.GATEWAY_ACQUIRER]
    names = [name for row in AcquirerRoute.objects.filter(merchant_id=merchant_id)
             for name in row.names if name in enabled()]
    return list(dict.fromkeys(names)) or [settings.GATEWAY_ACQUIRER]


def _claim(payment: Payment, name: str, previous: str) -> bool:
    """Write `name` as the payment's acquirer if it is still `previous` (a payment not saved yet,
    the S2S one being registered, just takes it). False: another request routed it first."""
    if payment.pk is None:
        payment.acquirer = name
        return True
    # No lock: a plain compare-and-set on one column that no transition reads; the row's status
    # is the attempt's own (PROCESSING, claimed by this request).
    if Payment.objects.filter(pk=payment.pk, acquirer=previous).update(acquirer=name) != 1:
        return False
    payment.acquirer = name
    return True


def routed_call(payment: Payment, method: str, call: Callable[[Acquirer], T], *, step: str,
                bound_to: str = "") -> Routed[T]:
    """`call` on the payment's acquirer, routing it first when it is not yet (the module's
    docstring). `bound_to`: the acquirer this step is already bound to, tried alone and never
    failed over (the card fields the page drew; a UPI collect request, which may be in the
    payer's app even when its answer is lost). Raises what the last acquirer tried raised."""
    if payment.acquirer:
        return Routed(call(acquirer_for(payment)), payment.acquirer, {})
    route = [bound_to] if bound_to else route_for(payment.merchant_id, method)[:MAX_ACQUIRERS_PER_ATTEMPT]
    failed: list[dict] = []
    previous = ""
    for position, name in enumerate(route):
        if not _claim(payment, name, previous):
            payment.refresh_from_db(fields=["acquirer"])
            return Routed(call(acquirer_for(payment)), payment.acquirer, {})
        previous = name
        try:
            answer = call(acquirer_named(name))
        except AcquirerRefused:
            health_record(name, method, failed=False)  # it answered: a refusal is not an outage
            raise
        except AcquirerError as exc:
            health_record(name, method, failed=True)
            failed.append({"acquirer": name, "failure": type(exc).__name__, "message": str(exc)[:200]})
            if position + 1 < len(route):
                logger.warning("payment %s: %s failed technically at %s (%s); failing over to %s",
                               payment.sabpaisa_txn_id, name, step, type(exc).__name__, route[position + 1])
                acquirer_failovers.labels(name, route[position + 1], method,
                                          "unavailable" if isinstance(exc, AcquirerUnavailable) else "error").inc()
                continue
            raise
        health_record(name, method, failed=False)
        why = ("failover: " + "; ".join(f"{f['acquirer']} {f['failure']}" for f in failed)) if failed else \
            f"first of the route for {method}" + (f" ({step} never fails over)" if bound_to else "")
        return Routed(answer, name, {"acquirer": name, "route": {"tried": route[:position + 1], "why": why,
                                                                  "failed": failed}})
    raise AssertionError("a route has at least one acquirer")


def failed_over_from(payment: Payment) -> list[str]:
    """The acquirers this payment's attempts failed over from (the `route.failed` of its routed
    steps' events): each may hold an order of it, opened before its answer was lost (a timeout,
    a dropped connection), which only that acquirer can tell us about."""
    events = payment.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__has_key="route")
    names = [failed.get("acquirer") for event in events if isinstance(event.detail.get("route"), dict)
             for failed in event.detail["route"].get("failed") or [] if isinstance(failed, dict)]
    return list(dict.fromkeys(name for name in names if name))


def routed_answer(routed: Routed[AcquirerAnswer]) -> AcquirerAnswer:
    """The routed call's answer carrying the route in its `raw`, so that the step's event in the
    payment's story says which acquirer took it and why."""
    return replace(routed.answer, raw={**routed.answer.raw, **routed.story}) if routed.story else routed.answer
