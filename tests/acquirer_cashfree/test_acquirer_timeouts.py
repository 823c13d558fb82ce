"""Every call of CashfreeAcquirer ends within the client's timeout when Cashfree never answers:
a real socket server on loopback that accepts connections, reads, and stays silent."""
from __future__ import annotations

import socket
import threading
import time

import pytest

from payments.acquirer.base import CALL_TIME_LIMIT, AcquirerUnavailable
from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
from payments.acquirer.cashfree.client import CashfreeClient
from payments.cards import CardInput
from payments.models import Payment

from .conftest import SECRET

TIMEOUT = 0.5


@pytest.fixture
def silent_url():
    """A server that takes every connection and never writes a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held, stop = [], threading.Event()

    def accept():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/pg"
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    listener.close()
    assert held, "the acquirer never connected"


def a_payment() -> Payment:
    return Payment(merchant_id=1, flow=Payment.Flow.HOSTED, merchant_txn_id="ORD-T", amount=1000,
                   customer_phone="9876543210", customer_email="a@example.com", attempt=1, card_challenge_ref="1")


CALLS = {
    "upi_register": lambda a, p: a.upi_register(payment=p),
    "upi_collect": lambda a, p: a.upi_collect(payment=p, vpa="asha@okbank"),
    "upi_status": lambda a, p: a.upi_status(payment=p, payer_vpa="asha@okbank"),
    "card_authorize": lambda a, p: a.card_authorize(
        payment=p, card=CardInput(number="4111111111111111", expiry_month=1, expiry_year=2031, cvv="123")),
    "card_verify_otp": lambda a, p: a.card_verify_otp(payment=p, otp="1", challenge_ref="1"),
    "bank_authorize": lambda a, p: a.bank_authorize(payment=p, bank_code="HDFC", approved=True),
    "call_status": lambda a, p: a.call_status(payment=p, step="transfer_received"),
    "refund": lambda a, p: a.refund(payment=p, amount=100, refund_id="rfnd_t"),
    "reverse": lambda a, p: a.reverse(payment=p, bank_rrn="1", amount=100, reversal_id="rev_t"),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_call_cashfree_never_answers_is_unavailable_within_the_timeout(silent_url, call):
    acquirer = CashfreeAcquirer(CashfreeClient(base_url=silent_url, client_id="TEST1234567890",
                                               client_secret=SECRET, timeout=TIMEOUT))
    started = time.monotonic()
    with pytest.raises(AcquirerUnavailable):
        call(acquirer, a_payment())
    elapsed = time.monotonic() - started
    assert TIMEOUT <= elapsed < TIMEOUT + 1.5, elapsed


def test_the_configured_timeout_is_well_inside_the_protocols_call_limit(settings):
    settings.CASHFREE_BASE_URL = "https://sandbox.cashfree.com/pg"
    settings.CASHFREE_CLIENT_ID, settings.CASHFREE_CLIENT_SECRET = "TEST1234567890", SECRET
    acquirer = CashfreeAcquirer()
    # One protocol call makes at most two Cashfree calls (the order, then order pay).
    assert 2 * acquirer.client.timeout < CALL_TIME_LIMIT.total_seconds()
