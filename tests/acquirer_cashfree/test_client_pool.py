"""The client's connections are kept alive and reused (issue 28), over TLS as in production:
the double is benchmarks/tlsdouble.py's, its certificate made for the test and trusted by this
client only (an ssl context of its own, never the system's store)."""
from __future__ import annotations

import ssl
import threading
from pathlib import Path

import pytest

from benchmarks.tlsdouble import TlsDouble
from payments.acquirer.cashfree.client import POOL_CONNECTIONS, CashfreeClient
from payments.acquirer.cashfree.errors import CashfreeUnavailable

from .conftest import SECRET


@pytest.fixture
def double():
    double = TlsDouble().start()
    yield double
    double.stop()


def client_for(double: TlsDouble, *, trusted: bool = True, timeout: float = 10) -> CashfreeClient:
    context = ssl.create_default_context(cadata=Path(double.ca_file).read_text()) if trusted else None
    client = CashfreeClient(base_url=double.base_url, client_id="TEST1234567890", client_secret=SECRET,
                            timeout=timeout, ssl_context=context)
    client.calls_per_minute = 10 ** 6  # the account's shared limit is not what these count
    return client


def test_calls_one_after_another_share_one_tls_connection(double):
    client = client_for(double)
    for n in range(20):
        assert client.get_order(f"order_{n}").order_id == f"order_{n}"
    assert double.calls == 20 and double.connections == 1


def test_a_client_made_per_call_still_shares_the_processs_pool(double):
    context = ssl.create_default_context(cadata=Path(double.ca_file).read_text())
    for n in range(5):
        CashfreeClient(base_url=double.base_url, client_id="TEST1234567890", client_secret=SECRET,
                       ssl_context=context).get_order(f"order_{n}")
    assert double.connections == 1


def test_concurrent_calls_open_no_more_connections_than_the_pool_holds(double):
    client = client_for(double)
    errors = []

    def calls():
        try:
            for n in range(10):
                client.get_order(f"order_{n}")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=calls) for _ in range(POOL_CONNECTIONS * 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert double.calls == POOL_CONNECTIONS * 2 * 10
    assert double.connections <= POOL_CONNECTIONS


def test_a_certificate_nobody_trusts_is_no_answer(double):
    with pytest.raises(CashfreeUnavailable):
        client_for(double, trusted=False).get_order("order_1")
    assert double.calls == 0
