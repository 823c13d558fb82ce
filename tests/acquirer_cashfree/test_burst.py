"""A burst of S2S creations past Cashfree's limit, at a small scale (issue 28): every answer is a
payment or SERVICE_UNAVAILABLE with Retry-After, never a 5xx, and Cashfree never has to refuse
a call (the account's shared limit, payments.acquirer.limits, keeps below it). Not timed: the
figures of a minute at 3x the limit are benchmarks/acquirer_burst.py's, in RESULTS.md.

Cashfree is benchmarks/tlsdouble.py's double over TLS, enforcing a limit per minute as Cashfree
does (429 with x-ratelimit-* past it), scaled down to 16 calls a minute; the client keeps to
three quarters of it, as in production (12: two calls, one creation, per ten-second window)."""
from __future__ import annotations

import json
import ssl
import threading
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from benchmarks.tlsdouble import TlsDouble
from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
from payments.acquirer.cashfree.client import CashfreeClient
from payments.models import Payment
from tests.payments.hosted.doubles import use_acquirer
from tests.payments.s2s.conftest import URL
from tests.support.factories import make_merchant, signed_body

from .conftest import SECRET

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 16


@pytest.fixture
def limited_cashfree(settings, monkeypatch):
    double = TlsDouble(limit_per_window=LIMIT, window_seconds=60).start()
    client = CashfreeClient(base_url=double.base_url, client_id="BURST1234567890", client_secret=SECRET,
                            timeout=1.0, ssl_context=ssl.create_default_context(
                                cadata=Path(double.ca_file).read_text()))
    client.calls_per_minute = int(LIMIT * 0.75)  # as CashfreeClient does with Cashfree's 200
    settings.GATEWAY_ACQUIRER = "cashfree"
    use_acquirer(monkeypatch, CashfreeAcquirer(client))
    yield double
    double.stop()


def test_a_burst_past_the_limit_gets_payments_or_retry_after_and_no_call_over_the_limit(limited_cashfree):
    tm = make_merchant(name="Burst Tea")
    bodies = [signed_body(tm, paymentMode="UPI_INTENT") for _ in range(24)]
    answers = []
    lock = threading.Lock()

    def send(mine):
        try:
            for body in mine:
                response = Client(raise_request_exception=False).post(
                    URL, json.dumps(body), content_type="application/json", **tm.headers)
                with lock:
                    answers.append(response)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(bodies[n::8],)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    statuses = [answer.status_code for answer in answers]
    assert len(answers) == 24 and not [s for s in statuses if s >= 500]
    created = [a for a in answers if a.status_code == 201]
    refused = [a for a in answers if a.status_code != 201]
    assert created, "some payments are made within the limit"
    assert refused, "a burst of three times the limit is not all made"
    for answer in refused:
        assert answer.json()["errorCode"] == "SERVICE_UNAVAILABLE", answer.json()
        assert int(answer["Retry-After"]) >= 1
    assert limited_cashfree.refused == 0  # no call reached Cashfree past its limit
    assert Payment.objects.count() == len(created)
