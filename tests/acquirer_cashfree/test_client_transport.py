"""What the client does when Cashfree is slow, gone, or odd, and what it never writes down.

The misbehaving servers here are loopback doubles (Prism always answers promptly and well);
the requests they receive are the same bytes the contract tests validate through Prism.
"""
from __future__ import annotations

import logging
import re
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from payments.acquirer.cashfree.client import CashfreeClient, Customer
from payments.acquirer.cashfree.errors import (
    CashfreeBadResponse,
    CashfreeError,
    CashfreeUnavailable,
)
from payments.cards import CardInput

from .conftest import SECRET

CARD_NUMBER, CVV = "4111111111111111", "987"
CARD = CardInput(number=CARD_NUMBER, expiry_month=12, expiry_year=2030, cvv=CVV)
CUSTOMER = Customer(customer_id="cust_0001", phone="9876543210")


def client_for(url: str, timeout: float = 10) -> CashfreeClient:
    return CashfreeClient(base_url=url, client_id="TEST1234567890", client_secret=SECRET,
                          timeout=timeout)


class _Double(BaseHTTPRequestHandler):
    behaviour = "ok"

    def log_message(self, *args):
        pass

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        behaviour = self.server.behaviour
        if behaviour == "silent":
            self.server.release.wait(30)
            return
        if behaviour == "trickle":
            # A whole, valid answer, one byte at a time: only a bound on the whole call, not
            # on each read, stops a client from waiting the minute this takes.
            body = b" " * 300 + b'{"order_id":"o1","order_status":"PAID"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for byte in body:
                    if self.server.release.is_set():
                        return
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:
                        self.server.trickle_outcome = "cut off by the client"
                        return
                    self.server.release.wait(0.2)
                self.server.trickle_outcome = "sent to the end"
            finally:
                self.server.trickle_done.set()
            return
        status, body = {
            "html": (200, b"<html>maintenance</html>"),
            "redirect": (302, b""),
            "gateway-html": (504, b"<html>Gateway Timeout</html>"),
            "odd-amount": (200, b'{"order_id":"o1","order_amount":10.005}'),
            "huge": (200, b'{"order_id":"' + b"o" * (2 << 20) + b'"}'),
        }[behaviour]
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "https://elsewhere.example/")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer


@pytest.fixture
def double():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Double)
    server.daemon_threads = True
    server.release = threading.Event()
    server.trickle_done = threading.Event()
    server.trickle_outcome = ""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


def url_of(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.mark.parametrize("behaviour", ["silent", "trickle"])
def test_a_call_that_outlives_its_timeout_is_unavailable(double, behaviour):
    double.behaviour = behaviour
    with pytest.raises(CashfreeUnavailable) as raised:
        client_for(url_of(double), timeout=0.5).get_order("o1")
    assert raised.value.request_id
    if behaviour == "trickle":
        # The client hung up when its time was up, rather than reading to the end and then
        # noticing it had run over: the worker is not held for the minute the answer takes.
        assert double.trickle_done.wait(120)
        assert double.trickle_outcome == "cut off by the client"


def test_nobody_listening_is_unavailable():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(CashfreeUnavailable):
        client_for(f"http://127.0.0.1:{port}").get_order("o1")


@pytest.mark.parametrize("behaviour, error", [
    ("html", CashfreeBadResponse),
    ("redirect", CashfreeUnavailable),
    ("gateway-html", CashfreeUnavailable),
    ("odd-amount", CashfreeBadResponse),
    ("huge", CashfreeBadResponse),
])
def test_an_answer_we_cannot_use_is_unavailable_never_a_crash(double, behaviour, error):
    double.behaviour = behaviour
    with pytest.raises(error) as raised:
        client_for(url_of(double)).get_order("o1")
    assert raised.value.request_id


@pytest.mark.parametrize("url", ["http://sandbox.cashfree.com/pg", "ftp://127.0.0.1/", "sandbox.cashfree.com"])
def test_a_base_address_that_is_not_https_is_refused(url):
    with pytest.raises(ValueError, match="https"):
        client_for(url)


def test_https_and_loopback_http_are_accepted():
    client_for("https://sandbox.cashfree.com/pg")
    client_for("http://127.0.0.1:4010")
    client_for("http://localhost:4010")


@pytest.mark.parametrize("client_id, client_secret", [("", SECRET), ("TEST1", "")])
def test_missing_credentials_are_refused(client_id, client_secret):
    with pytest.raises(ValueError, match="client id and client secret"):
        CashfreeClient(base_url="https://sandbox.cashfree.com/pg", client_id=client_id,
                       client_secret=client_secret)


def test_the_secret_is_not_in_the_clients_repr():
    assert SECRET not in repr(client_for("https://sandbox.cashfree.com/pg"))


def test_card_number_cvv_and_secret_never_reach_a_log_or_an_error(cashfree, double, caplog):
    caplog.set_level(logging.DEBUG)
    answers = [cashfree.pay_card(payment_session_id="s", card=CARD, idempotency_key=str(uuid.uuid4()))]
    errors: list[CashfreeError] = []
    cashfree.prefer = "code=400"
    with pytest.raises(CashfreeError) as raised:
        cashfree.pay_card(payment_session_id="s", card=CARD, idempotency_key=str(uuid.uuid4()))
    errors.append(raised.value)
    cashfree.prefer = "code=502"
    with pytest.raises(CashfreeError) as raised:
        cashfree.pay_card(payment_session_id="s", card=CARD, idempotency_key=str(uuid.uuid4()))
    errors.append(raised.value)
    double.behaviour = "silent"
    with pytest.raises(CashfreeUnavailable) as raised:
        client_for(url_of(double), timeout=0.5).pay_card(
            payment_session_id="s", card=CARD, idempotency_key=str(uuid.uuid4()))
    errors.append(raised.value)

    assert caplog.records, "the calls are logged (method, path, status)"
    written = caplog.text + "".join(f"{e!s}{e!r}{e.args}" for e in errors) + "".join(map(repr, answers))
    for secret in (CARD_NUMBER, SECRET, "card_cvv", "card_number"):
        assert secret not in written
    # The CVV's three digits could turn up inside a duration or a request id: look for it alone.
    assert not re.search(rf"(?<![\w.-]){CVV}(?![\w.-]| ms)", written)


def test_a_crash_mid_call_shows_no_card_number_cvv_or_secret_on_the_error_report(monkeypatch):
    from django.views.debug import ExceptionReporter

    client = client_for("https://sandbox.cashfree.com/pg")

    def crash(*args, **kwargs):
        raise TypeError("a bug below the card payment")

    monkeypatch.setattr(client, "_exchange", crash)
    try:
        client.pay_card(payment_session_id="s", card=CARD, idempotency_key=str(uuid.uuid4()))
    except TypeError as exc:
        frames = ExceptionReporter(None, type(exc), exc, exc.__traceback__).get_traceback_frames()
    # What the debug page lists of the client's own frames (the stand-in for _exchange is ours).
    shown = {frame["function"]: dict(frame["vars"]) for frame in frames
             if frame["function"] in ("pay_card", "_pay", "_call")}
    assert set(shown) == {"pay_card", "_pay", "_call"}  # the frames are there, their secrets are not
    report = repr(shown)
    assert CARD.number not in report and CARD.cvv not in report and SECRET not in report
