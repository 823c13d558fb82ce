"""The acquirer behind the gateway. `get_acquirer()` returns the configured implementation."""
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from payments.acquirer.base import Acquirer

# GATEWAY_ACQUIRER -> the class implementing the Acquirer protocol. Nothing else chooses by
# name: the services ask the protocol (payments.acquirer.base). A new acquirer adds its row.
IMPLEMENTATIONS = {
    "sandbox": "payments.acquirer.sandbox.SandboxAcquirer",
    "cashfree": "payments.acquirer.cashfree.acquirer.CashfreeAcquirer",
}
# The acquirers that ship (gateway/settings.py refuses any other GATEWAY_ACQUIRER at start).
ACQUIRERS = tuple(IMPLEMENTATIONS)


@lru_cache(maxsize=1)
def _load(name: str) -> Acquirer:
    path = IMPLEMENTATIONS.get(name)
    if path is None:
        raise ImproperlyConfigured(f"unknown acquirer {name!r}; known: {', '.join(sorted(IMPLEMENTATIONS))}")
    implementation = import_string(path)
    # An acquirer configured from settings (its credentials) builds itself with from_settings().
    return getattr(implementation, "from_settings", implementation)()


def get_acquirer() -> Acquirer:
    return _load(settings.GATEWAY_ACQUIRER)
