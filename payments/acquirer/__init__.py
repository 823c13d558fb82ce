"""The acquirer behind the gateway. `get_acquirer()` returns the configured implementation."""
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from payments.acquirer.base import Acquirer

# The acquirers that ship (gateway/settings.py refuses any other GATEWAY_ACQUIRER at start).
ACQUIRERS = ("sandbox", "cashfree")


@lru_cache(maxsize=1)
def _load(name: str) -> Acquirer:
    if name == "sandbox":
        from payments.acquirer.sandbox import SandboxAcquirer

        return SandboxAcquirer()
    if name == "cashfree":
        from payments.acquirer.cashfree.acquirer import CashfreeAcquirer

        return CashfreeAcquirer.from_settings()
    raise ImproperlyConfigured(f"unknown acquirer {name!r}; one of: {', '.join(ACQUIRERS)}")


def get_acquirer() -> Acquirer:
    return _load(settings.GATEWAY_ACQUIRER)
