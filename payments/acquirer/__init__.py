"""The acquirer behind the gateway. `get_acquirer()` returns the configured implementation."""
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from payments.acquirer.base import Acquirer

# GATEWAY_ACQUIRER -> the class implementing the Acquirer protocol. Nothing else chooses by
# name: the services ask the protocol (payments.acquirer.base). A new acquirer adds its row
# (and gateway/settings.py its name, which refuses any other at start).
IMPLEMENTATIONS = {
    "sandbox": "payments.acquirer.sandbox.SandboxAcquirer",
    "cashfree": "payments.acquirer.cashfree.acquirer.CashfreeAcquirer",
}


@lru_cache(maxsize=1)
def _load(name: str) -> Acquirer:
    path = IMPLEMENTATIONS.get(name)
    if path is None:
        raise ImproperlyConfigured(f"unknown acquirer {name!r}; known: {', '.join(sorted(IMPLEMENTATIONS))}")
    return import_string(path)()


def get_acquirer() -> Acquirer:
    return _load(settings.GATEWAY_ACQUIRER)


def configured_acquirer_named(name: str) -> Acquirer | None:
    """The configured acquirer when it is the one called `name` (an inbound delivery's address
    names it), else None: the gateway takes notices only from the acquirer it pays with."""
    if name not in IMPLEMENTATIONS or name != settings.GATEWAY_ACQUIRER:
        return None
    return get_acquirer()
