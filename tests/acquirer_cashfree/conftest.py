"""Cashfree's own API description, served by Stoplight Prism on loopback, as the other end of
every call the client makes in these tests.

Prism answers a request the description does not allow with an `sl-violations` header (and a
422 or 401); the `cashfree` fixture records every exchange and fails the test on any
violation of a request. Prism also reports where the description's own examples break its own
response schemas: those are Cashfree's defects, not ours, pinned one by one in
DESCRIPTION_DEFECTS so that any other response violation still fails.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from payments.acquirer.cashfree.client import CashfreeClient
from tests.acquirer_cashfree.double import description_path

ROOT = Path(__file__).resolve().parents[2]

DESCRIPTION = description_path()
PRISM = ROOT / ".prism" / "node_modules" / ".bin" / "prism"

# (location with list indexes dropped, code): violations Prism reports in Cashfree's own
# example responses, whatever we send. See docs/going-live.md, "What the description left unclear".
DESCRIPTION_DEFECTS = {
    # OrderEntity's example has "terminal_data": null; the schema says object.
    (("response", "body", "terminal_data"), "type"),
    # PaymentEntity's examples: error_details/authorization null where an object is required,
    # and payment_method matching none (or several) of its oneOf branches.
    (("response", "body", "error_details"), "type"),
    (("response", "body", "authorization"), "type"),
    (("response", "body", "payment_method"), "required"),
    (("response", "body", "payment_method"), "oneOf"),
}
# Whole subtrees of an example whose nulls break the schema's types: SettlementReconEntity's
# example (POST /settlement/recon) writes null for dozens of typed fields of each event.
DESCRIPTION_DEFECT_SUBTREES = {
    ("/settlement/recon", ("response", "body", "data"), "type"),
}
# DisputesEntity's example (every dispute call answers it) writes reason_code, cf_payment_id and
# customer_phone as numbers where its schema says string. Pinned to the dispute paths only; the
# reading (payments/acquirer/cashfree/disputes.py) takes either.
DISPUTE_PATH = re.compile(r"(^|/)(disputes/\d+(/accept|/documents)?|orders/[^/]+/disputes)$")
DISPUTE_EXAMPLE_DEFECTS = {
    (("response", "body", "reason_code"), "type"),
    (("response", "body", "order_details", "cf_payment_id"), "type"),
    (("response", "body", "customer_details", "customer_phone"), "type"),
}
# Prism writes a long list as "Too many violations! [..." cut short mid-object.
_TOO_MANY = "Too many violations!"
_WHOLE_VIOLATION = re.compile(r'\{"location":\[[^\]]*\],"severity":"[^"]*","code":"[^"]*","message":"[^"]*"\}')


def violations_read(header: str) -> list:
    """The violations of an `sl-violations` header. A list Prism cut short keeps every
    violation it wrote out whole (the first dozens); what was cut off is not seen."""
    if not header:
        return []
    if header.startswith(_TOO_MANY):
        return [json.loads(found) for found in _WHOLE_VIOLATION.findall(header)]
    return json.loads(header)


def _defect_key(violation: dict) -> tuple:
    location = tuple(part for part in violation.get("location", []) if not str(part).isdigit())
    return location, violation.get("code")


def _is_defect(path: str, violation: dict) -> bool:
    location, code = _defect_key(violation)
    if DISPUTE_PATH.search(path) and (location, code) in DISPUTE_EXAMPLE_DEFECTS:
        return True
    return (location, code) in DESCRIPTION_DEFECTS or any(
        path == defect_path and location[:len(prefix)] == prefix and code == defect_code
        for defect_path, prefix, defect_code in DESCRIPTION_DEFECT_SUBTREES)


@dataclass
class Exchange:
    method: str
    path: str
    headers: dict
    body: dict | None
    status: int
    violations: list = field(default_factory=list)

    @property
    def request_violations(self) -> list:
        return [v for v in self.violations if (v.get("location") or [""])[0] == "request"]

    @property
    def unexplained_response_violations(self) -> list:
        return [v for v in self.violations if (v.get("location") or [""])[0] != "request"
                and not _is_defect(self.path, v)]


class PrismClient(CashfreeClient):
    """The real client, recording each exchange and, when asked, sending Prism's `Prefer`
    header (which example or status code to answer with) alongside its own headers."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.exchanges: list[Exchange] = []
        self.prefer = ""

    def _exchange(self, method, path, headers, payload):
        if self.prefer:
            headers = {**headers, "Prefer": self.prefer}
        status, response_headers, data = super()._exchange(method, path, headers, payload)
        violations = violations_read(response_headers.get("sl-violations") or "")
        self.exchanges.append(Exchange(method, path, dict(headers), _body_of(headers, payload), status, violations))
        return status, response_headers, data


def _body_of(headers: dict, payload: bytes | None):
    """The JSON body sent, or a multipart form's raw bytes (a dispute document upload)."""
    if not payload:
        return None
    if headers.get("Content-Type", "").startswith("multipart/form-data"):
        return {"multipart": payload}
    return json.loads(payload)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def prism_url():
    if not DESCRIPTION.is_file():
        pytest.fail(f"Cashfree's description is not at {DESCRIPTION}")
    if not PRISM.exists():
        pytest.fail("Prism is not installed: run scripts/test, which installs it into .prism/")
    if not shutil.which("node"):
        pytest.fail("Prism needs node")
    port = _free_port()
    log = open(ROOT / "var" / "prism-cashfree.log", "w") if (ROOT / "var").is_dir() else subprocess.DEVNULL
    process = subprocess.Popen(
        [str(PRISM), "mock", "--host", "127.0.0.1", "--port", str(port), str(DESCRIPTION)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    deadline = time.monotonic() + 120  # parsing a 1 MB description takes a while on a busy box
    while True:
        if process.poll() is not None:
            pytest.fail(f"Prism exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                os.killpg(process.pid, signal.SIGKILL)
                pytest.fail("Prism did not start listening within 120 s")
            time.sleep(0.25)
    yield f"http://127.0.0.1:{port}"
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if log is not subprocess.DEVNULL:
        log.close()


SECRET = "cfsk_ma_test_0123456789abcdef"


@pytest.fixture
def cashfree(prism_url):
    client = PrismClient(base_url=prism_url, client_id="TEST1234567890", client_secret=SECRET,
                         timeout=10)
    yield client
    bad = [(e.method, e.path, e.request_violations) for e in client.exchanges if e.request_violations]
    assert not bad, f"requests Cashfree's description does not allow: {bad}"
    odd = [(e.method, e.path, e.unexplained_response_violations)
           for e in client.exchanges if e.unexplained_response_violations]
    assert not odd, f"response violations not among the description's known defects: {odd}"
