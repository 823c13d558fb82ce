"""The acquirers behind the gateway: the table of implementations, the only list of their names.

An acquirer is one package, payments/acquirer/<name>/ (its adapter, client, errors, money, notices
and the check of its own settings), one row below and one docs page. Nothing else spells an
acquirer's name: gateway/settings.py validates GATEWAY_ACQUIRER against this table and runs the
row's settings check at start, the services ask the protocol (payments.acquirer.base), the inbound
door takes the name from its address, and tests/acquirers/ runs one contract over every row.

This module imports no model, so that the settings can read it before Django is set up.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from payments.acquirer.base import Acquirer


@dataclass(frozen=True)
class Implementation:
    adapter: str       # the class implementing the Acquirer protocol
    settings_check: str  # problems(settings) -> list[str]: what in the settings it cannot honour
    docs: str          # the page that maps its flows, for operators
    moves_money: bool  # False: a simulator, refused in production and staging's default


IMPLEMENTATIONS = {
    "sandbox": Implementation(adapter="payments.acquirer.sandbox.acquirer.SandboxAcquirer",
                              settings_check="payments.acquirer.sandbox.checks.problems",
                              docs="docs/sandbox.md", moves_money=False),
    "cashfree": Implementation(adapter="payments.acquirer.cashfree.acquirer.CashfreeAcquirer",
                               settings_check="payments.acquirer.cashfree.checks.problems",
                               docs="docs/going-live.md", moves_money=True),
    "razorpay": Implementation(adapter="payments.acquirer.razorpay.acquirer.RazorpayAcquirer",
                               settings_check="payments.acquirer.razorpay.checks.problems",
                               docs="docs/going-live.md", moves_money=True),
}


def staging_default() -> str:
    """The acquirer staging uses unless told otherwise: the simulator, which moves no money."""
    return next(name for name, row in IMPLEMENTATIONS.items() if not row.moves_money)


def settings_problems(name: str, values) -> list[str]:
    """What is wrong with GATEWAY_ACQUIRER=`name` given the settings `values` (any object with the
    settings as attributes: the settings module while it loads, django.conf.settings after). The
    first is raised at start by gateway/settings.py; payments.apps registers the same as a
    system check (payments.E010)."""
    row = IMPLEMENTATIONS.get(name)
    if not name and getattr(values, "IS_PRODUCTION", False):
        return ["GATEWAY_ENV=production needs a real acquirer: set GATEWAY_ACQUIRER to one of "
                + ", ".join(repr(n) for n, r in IMPLEMENTATIONS.items() if r.moves_money) + " with its credentials."]
    if row is None:
        return [f"GATEWAY_ACQUIRER={name!r} is not an acquirer of this gateway: use one of "
                + ", ".join(repr(known) for known in IMPLEMENTATIONS)]
    if getattr(values, "IS_PRODUCTION", False) and not row.moves_money:
        return [f"GATEWAY_ENV=production needs a real acquirer: GATEWAY_ACQUIRER={name!r} is a simulator that "
                "moves no money and is refused in production; set one of "
                + ", ".join(repr(n) for n, r in IMPLEMENTATIONS.items() if r.moves_money) + " with its credentials."]
    return import_string(row.settings_check)(values)


def check_acquirer_settings(app_configs=None, **kwargs):
    """payments.E010: the enabled acquirers' settings, as settings_problems reads them."""
    from django.core.checks import Error

    return [Error(problem, id="payments.E010")
            for name in enabled() for problem in settings_problems(name, settings)]


@lru_cache(maxsize=8)
def _load(name: str) -> Acquirer:
    row = IMPLEMENTATIONS.get(name)
    if row is None:
        raise ImproperlyConfigured(f"unknown acquirer {name!r}; known: {', '.join(sorted(IMPLEMENTATIONS))}")
    return import_string(row.adapter)()


def get_acquirer() -> Acquirer:
    """The configured acquirer (GATEWAY_ACQUIRER): the default of every route, and the one a
    payment not routed yet would go to. A call about one payment asks acquirer_for(payment)."""
    return _load(settings.GATEWAY_ACQUIRER)


def enabled() -> tuple[str, ...]:
    """The acquirers this deployment pays with (GATEWAY_ACQUIRERS, the configured one first),
    each with its settings checked at start: the only ones a route may name."""
    return tuple(dict.fromkeys([settings.GATEWAY_ACQUIRER, *settings.GATEWAY_ACQUIRERS]))


def acquirer_named(name: str) -> Acquirer:
    """The enabled acquirer called `name`. ImproperlyConfigured for any other."""
    if name not in enabled():
        raise ImproperlyConfigured(f"acquirer {name!r} is not enabled (GATEWAY_ACQUIRERS: {', '.join(enabled())})")
    return _load(name)


def acquirer_for(payment) -> Acquirer:
    """The acquirer that took `payment` (Payment.acquirer), which every later call about it goes
    to: its status query, refunds, reversals and notices. A payment not routed yet: the
    configured one. One routed to an acquirer since disabled is still sent to it: its money is
    there (its settings must stay until its payments are settled)."""
    name = payment.acquirer or settings.GATEWAY_ACQUIRER
    if name not in IMPLEMENTATIONS:
        raise ImproperlyConfigured(f"payment {payment.pk} names unknown acquirer {name!r}")
    return _load(name)


def acquirer_holding(name: str) -> Acquirer:
    """The acquirer called `name` where money of ours already is (a payment's attempt approved
    there), enabled now or not, as acquirer_for: a reversal of an approval at an acquirer the
    payment failed over from goes to that one (payments.services.reversals)."""
    if name not in IMPLEMENTATIONS:
        raise ImproperlyConfigured(f"unknown acquirer {name!r}; known: {', '.join(sorted(IMPLEMENTATIONS))}")
    return _load(name)


def configured_acquirer_named(name: str) -> Acquirer | None:
    """The enabled acquirer called `name` (an inbound delivery's address names it), else None:
    the gateway takes notices only from the acquirers it pays with."""
    if name not in IMPLEMENTATIONS or name not in enabled():
        return None
    return _load(name)
