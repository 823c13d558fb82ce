"""The acquirer behind the gateway. `get_acquirer()` returns the configured implementation."""
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from payments.acquirer.base import Acquirer


@lru_cache(maxsize=1)
def _load(name: str) -> Acquirer:
    if name == "sandbox":
        from payments.acquirer.sandbox import SandboxAcquirer

        return SandboxAcquirer()
    raise ImproperlyConfigured(f"unknown acquirer {name!r}; the sandbox is the only one that ships")


def get_acquirer() -> Acquirer:
    return _load(settings.GATEWAY_ACQUIRER)
