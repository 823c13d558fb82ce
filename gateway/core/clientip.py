"""The client's address, for per-address limits.

Without proxies in front (TRUSTED_PROXY_COUNT = 0, the default) it is REMOTE_ADDR, and
X-Forwarded-For is ignored: anyone can send that header. Behind N proxies that each append the
address they received the request from (nginx's $proxy_add_x_forwarded_for, cloud load
balancers), the client is the N-th address from the right of X-Forwarded-For: the one our
outermost proxy wrote. Addresses further left were written by the client and are not trusted.
"""
from __future__ import annotations

import ipaddress
import logging

from django.conf import settings


def client_ip(request) -> str:
    """The address a limit should count against: never empty ("unknown" when there is none)."""
    remote = request.META.get("REMOTE_ADDR", "") or "unknown"
    proxies = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0)
    if proxies <= 0:
        return remote
    # Repeated X-Forwarded-For headers arrive joined with commas, in order.
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [part for part in forwarded if part]
    if len(forwarded) < proxies:
        # Fewer hops than proxies: the request did not come through all of them (or a proxy
        # does not append); nothing in the header can be trusted.
        return remote
    candidate = forwarded[-proxies]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


# --- a proxy in front that nobody told us about ---------------------------------------------------
#
# With TRUSTED_PROXY_COUNT = 0 behind a proxy, every customer has the proxy's address, and the
# per-address limits count them all as one. "Likely behind a proxy" means: a request arrived
# from a loopback or private address (where proxies and load balancers sit, not customers)
# carrying X-Forwarded-For or Forwarded. The first such request in a process logs one warning
# (gateway.core.clientip, WARNING). At start, `manage.py check` (run by migrate) warns in production,
# where TLS is terminated in front of gunicorn (README), when TRUSTED_PROXY_COUNT is 0.

logger = logging.getLogger("gateway.clientip")
_proxy_warned = False


def proxy_likely(request) -> bool:
    """Whether this request looks like it came through a proxy: a forwarding header from a
    loopback or private address."""
    meta = request.META
    if not (meta.get("HTTP_X_FORWARDED_FOR") or meta.get("HTTP_FORWARDED")):
        return False
    try:
        remote = ipaddress.ip_address(meta.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return remote.is_loopback or remote.is_private


def warn_if_proxy_unconfigured(request) -> None:
    """Log once per process when a request is likely to come through a proxy while
    TRUSTED_PROXY_COUNT is 0. Costs a global read on every request after the first warning."""
    global _proxy_warned
    if _proxy_warned or getattr(settings, "TRUSTED_PROXY_COUNT", 0) or not proxy_likely(request):
        return
    _proxy_warned = True
    logger.warning(
        "a request came from %s with X-Forwarded-For: a proxy is likely in front of the service, "
        "but TRUSTED_PROXY_COUNT is 0, so every client behind it shares one address for the "
        "per-address limits. Set TRUSTED_PROXY_COUNT to the number of proxies that append to "
        "X-Forwarded-For.", request.META.get("REMOTE_ADDR"))


def check_proxy_setting(app_configs=None, **kwargs):
    """System check: production terminates TLS in front of gunicorn, so a proxy is there."""
    from django.core.checks import Warning

    if settings.IS_PRODUCTION and not getattr(settings, "TRUSTED_PROXY_COUNT", 0):
        return [Warning(
            "TRUSTED_PROXY_COUNT is 0 in production, where TLS is terminated by a proxy in front "
            "of the service: every customer would share the proxy's address for per-address limits.",
            hint="Set TRUSTED_PROXY_COUNT to the number of proxies that append to X-Forwarded-For; "
                 "silence gateway.W001 only if clients really connect to gunicorn directly.",
            id="gateway.W001")]
    return []
