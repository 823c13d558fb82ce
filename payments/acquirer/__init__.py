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
    """payments.E010: the configured acquirer's settings, as settings_problems reads them."""
    from django.core.checks import Error

    return [Error(problem, id="payments.E010")
            for problem in settings_problems(settings.GATEWAY_ACQUIRER, settings)]


@lru_cache(maxsize=1)
def _load(name: str) -> Acquirer:
    row = IMPLEMENTATIONS.get(name)
    if row is None:
        raise ImproperlyConfigured(f"unknown acquirer {name!r}; known: {', '.join(sorted(IMPLEMENTATIONS))}")
    return import_string(row.adapter)()


def get_acquirer() -> Acquirer:
    return _load(settings.GATEWAY_ACQUIRER)


def configured_acquirer_named(name: str) -> Acquirer | None:
    """The configured acquirer when it is the one called `name` (an inbound delivery's address
    names it), else None: the gateway takes notices only from the acquirer it pays with."""
    if name not in IMPLEMENTATIONS or name != settings.GATEWAY_ACQUIRER:
        return None
    return get_acquirer()
