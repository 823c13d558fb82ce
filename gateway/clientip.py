"""The client's address, for per-address limits.

Without proxies in front (TRUSTED_PROXY_COUNT = 0, the default) it is REMOTE_ADDR, and
X-Forwarded-For is ignored: anyone can send that header. Behind N proxies that each append the
address they received the request from (nginx's $proxy_add_x_forwarded_for, cloud load
balancers), the client is the N-th address from the right of X-Forwarded-For: the one our
outermost proxy wrote. Addresses further left were written by the client and are not trusted.
"""
from __future__ import annotations

import ipaddress

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
