"""Checks on merchant webhook addresses, so the gateway cannot be aimed at its own network."""
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

from gateway.errors import ValidationError


def _is_private(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
            or ip.is_reserved or ip.is_unspecified)


def validate_webhook_url(url: str, *, field: str = "webhookUrl") -> str:
    """Accept http(s) addresses with a host; outside development, refuse any host that
    resolves to a loopback, private, link-local or otherwise internal address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("must be an http or https address with a host", field=field)
    if parts.username or parts.password:
        raise ValidationError("must not carry credentials", field=field)
    if settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES:
        return url
    webhook_host_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), field=field)
    return url


def webhook_host_addresses(host: str, port: int, *, field: str = "webhookUrl") -> list[str]:
    """Resolve `host` once and return its addresses. Outside development, raise ValidationError
    when it does not resolve or when any address is internal. Webhook delivery connects to an
    address returned here, so a DNS answer that changes after the check (rebinding) cannot
    steer the request into a private range."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise ValidationError("host does not resolve", field=field) from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES and any(_is_private(a) for a in addresses):
        raise ValidationError("must not point at a loopback, private or link-local address", field=field)
    return addresses
