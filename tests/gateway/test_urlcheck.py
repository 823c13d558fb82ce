"""gateway.core.urlcheck: outside development a webhook address must resolve only to public
(globally routable) addresses, so the gateway cannot be aimed at its own network."""
import socket

import pytest

from gateway.core.errors import ValidationError
from gateway.core.urlcheck import validate_webhook_url, webhook_host_addresses

REFUSED = [
    "100.64.0.1",           # carrier-grade NAT (RFC 6598)
    "100.100.100.200",      # a cloud metadata service inside 100.64.0.0/10
    "169.254.169.254",      # link-local: the common metadata address
    "127.0.0.1",
    "10.1.2.3",
    "192.168.0.10",
    "0.0.0.0",
    "224.0.0.1",            # multicast
    "198.18.0.1",           # benchmarking
    "::1",
    "::ffff:127.0.0.1",     # IPv4-mapped loopback
    "::ffff:100.64.0.1",    # IPv4-mapped CGNAT
    "::ffff:169.254.169.254",
    "fd00::1",              # unique local
    "fe80::1",              # link-local
    "2002:7f00:1::1",       # 6to4 wrapping 127.0.0.1
    "64:ff9b::a9fe:a9fe",   # NAT64 of 169.254.169.254
]

ACCEPTED = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.216.34"]


def _resolving_to(monkeypatch, address):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET

    def fake_getaddrinfo(host, port, *args, **kwargs):
        sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
        return [(family, socket.SOCK_STREAM, 6, "", sockaddr)]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)


@pytest.mark.parametrize("address", REFUSED)
def test_a_host_resolving_to_a_non_public_address_is_refused_in_production(settings, monkeypatch, address):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    _resolving_to(monkeypatch, address)
    with pytest.raises(ValidationError):
        validate_webhook_url("https://hooks.merchant.example/webhook")
    with pytest.raises(ValidationError):
        webhook_host_addresses("hooks.merchant.example", 443)


@pytest.mark.parametrize("address", REFUSED)
def test_a_literal_non_public_address_is_refused_in_production(settings, address):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(ValidationError):
        validate_webhook_url(f"http://{host}/webhook")


@pytest.mark.parametrize("address", ACCEPTED)
def test_a_host_resolving_to_a_public_address_is_accepted(settings, monkeypatch, address):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    _resolving_to(monkeypatch, address)
    assert webhook_host_addresses("hooks.merchant.example", 443) == [address]


def test_development_allows_private_addresses(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    assert validate_webhook_url("http://100.64.0.1/webhook") == "http://100.64.0.1/webhook"
