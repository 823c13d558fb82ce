"""Checks on merchant webhook addresses, so the gateway cannot be aimed at its own network."""
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

from gateway.core.errors import ValidationError


# The well-known NAT64 prefix (RFC 6052): 64:ff9b::a.b.c.d reaches IPv4 a.b.c.d through a
# NAT64 gateway, so it is judged by that IPv4 address.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (IPv4-mapped, 6to4, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _is_private(address: str) -> bool:
    """True unless `address` is globally routable. A deny-list of ranges always misses one
    (100.64.0.0/10, carrier-grade NAT, holds some clouds' metadata services), so anything the
    IANA special-purpose registries do not mark global is refused. An IPv6 address wrapping an
    IPv4 one (::ffff:127.0.0.1) is judged by the IPv4 address it reaches."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id (fe80::1%eth0)
    if ip.version == 6:
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            ip = embedded
    # is_global misses multicast (224.0.0.0/4 is not "private"); refuse it explicitly.
    return not ip.is_global or ip.is_multicast or ip.is_unspecified or ip.is_reserved


def private_allowed(*, from_request: bool) -> bool:
    """Whether a webhook address may reach loopback and private networks. One that arrived in
    an API request (S2S webhookUrl) never may: any holder of a merchant's API key could aim the
    gateway's workers at its own network. Addresses staff set (the merchant's, the webhook
    inbox's) may where WEBHOOK_ALLOW_PRIVATE_ADDRESSES says so (staging). The one exception is
    WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE, a setting for tests (receivers on loopback),
    which start-up refuses in production (gateway.E011)."""
    if from_request:
        return bool(getattr(settings, "WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE", False)) and not settings.IS_PRODUCTION
    return settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES


def validate_webhook_url(url: str, *, field: str = "webhookUrl", from_request: bool = False) -> str:
    """Accept http(s) addresses with a host; unless private_allowed (staging, for addresses
    staff set), refuse any host that resolves to an address that is not globally routable
    (loopback, private, link-local, carrier-grade NAT, multicast, reserved, or an IPv6 address
    wrapping one of those). `from_request`: the address arrived in an API request."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("must be an http or https address with a host", field=field)
    if parts.username or parts.password:
        raise ValidationError("must not carry credentials", field=field)
    if private_allowed(from_request=from_request):
        return url
    webhook_host_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), field=field,
                           from_request=from_request)
    return url


def webhook_host_addresses(host: str, port: int, *, field: str = "webhookUrl", from_request: bool = False) -> list[str]:
    """Resolve `host` once and return its addresses. Unless private_allowed, raise
    ValidationError when it does not resolve or when any address is internal. Webhook delivery
    connects to an address returned here, so a DNS answer that changes after the check
    (rebinding) cannot steer the request into a private range."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise ValidationError("host does not resolve", field=field) from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not private_allowed(from_request=from_request) and any(_is_private(a) for a in addresses):
        raise ValidationError("must resolve only to public addresses (not loopback, private, link-local, "
                              "carrier-grade NAT or reserved)", field=field)
    return addresses
