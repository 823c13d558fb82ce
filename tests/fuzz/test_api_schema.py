"""Schemathesis against the project's own OpenAPI document (/api/schema/): every operation.

The application runs in-process (WSGI) on the real PostgreSQL and Redis, and every generated
case is then fixed up, with choices Hypothesis draws, so that most reach past authentication:

- headers: the fuzz merchant's X-Api-Key and X-Merchant-Id (S2S enabled); a few cases go
  without a key, with a wrong one, or naming another merchant;
- identifiers: mostly replaced by the merchant's real ones (a paid payment and its refund, a
  saved-card token, an open session, open S2S payments and their UPI links), so that 200
  answers are checked against the schema too;
- merchant and signature: mostly the merchant's code, timestamp now and the checksum of
  interface.md / CONTRACT.md computed after generation (payments: merchantId|merchantTxnId|
  amount|currency|timestamp; enquiry: merchantId|merchantTxnId|0|INR|timestamp; refunds:
  merchantId|transactionId|refundId|timestamp; a refund read: merchantId|refundId|timestamp);
  the other cases go as generated, so that INVALID_SIGNATURE, INVALID_TIMESTAMP, UNAUTHORIZED
  and VALIDATION_ERROR are exercised as well.

Checks: no 5xx, every status documented, the documented content type, every body matching its
documented schema, and (positive cases) no request the document allows refused with
VALIDATION_ERROR (schemathesis' "positive data acceptance", issue 29; values a JSON Schema
cannot state are drawn valid first: `_unstatable`). Both generation modes run (positive: what the schema allows; negative: what
it forbids, malformed JSON included).

Bounded for `scripts/test` (FUZZ_EXAMPLES per operation, derandomized, so a CI failure
reproduces); docs/testing.md has the long run. FUZZ_REPORT=1 (with -s) prints how many answers
of each status and errorCode every operation gave, to see how deep the run reached.
"""
from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass
from datetime import date

import pytest
import schemathesis
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from gateway.core.fields import CONTROL
from gateway.core.signing import compute_checksum
from gateway.wsgi import application
from payments.cards import CardInput
from payments.services.hosted import hosted_card_pay, hosted_card_verify_otp, hosted_payment_create
from payments.services.s2s import s2s_payment_create
from payments.services.card_tokens import payment_token_create
from payments.services.upi import upi_link
from refunds.models import Settlement, SettlementLine
from refunds.services import refund_create
from tests.support import factories
from tests.support.factories import make_merchant

FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
# FUZZ_DERANDOMIZE=0: new inputs on every run (a failure prints the blob that replays it).
FUZZ_DERANDOMIZE = os.environ.get("FUZZ_DERANDOMIZE", "1") != "0"
FUZZ_REPORT = os.environ.get("FUZZ_REPORT") == "1"



# Refusals of what the document cannot state, by operation and the field they name: an evidence
# file's content (PDF, PNG or JPEG by its bytes, not empty, no active content) and its docType
# (one of that dispute's own preferredEvidence types). Every other field there is still held.
UNSTATABLE_REFUSALS = {("POST", "/api/v2/disputes/{disputeId}/evidence"): ("file:", "docType:")}


class SchemaValidRefused(AssertionError):
    """A request the document allows was refused with VALIDATION_ERROR."""


def positive_data_not_refused(ctx, response, case):
    """Schemathesis' "positive data acceptance", as this API says it: a request valid under the
    published document is never refused with VALIDATION_ERROR (merchants generate clients from
    the document, so what it allows must be what the validators take). Other refusals stay
    possible: a wrong key or signature, a resource that does not exist, a state that forbids
    the operation."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    if isinstance(body, dict) and body.get("errorCode") == "VALIDATION_ERROR":
        if str(body.get("errorMessage", "")).startswith(UNSTATABLE_REFUSALS.get((case.method.upper(), case.path), ())):
            return None
        raise SchemaValidRefused(f"{case.method.upper()} {case.path}: a request valid under the document was "
                                 f"refused: {body.get('errorMessage')}; the request: {case.body!r:.300}, "
                                 f"{case.query!r:.200}")
    return None


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          positive_data_not_refused]

CONFIG = schemathesis.Config.from_dict({
    # Never the same request twice within an operation's budget.
    "generation": {"unique-inputs": True},
    # Schemathesis would otherwise reuse string constants of the application's own source and
    # values from earlier responses; in a budget of a few dozen cases they crowded out the rest
    # (a third of all emails were "gateway@sandbox").
    "analysis": {"constants": {"enabled": False}},
    "phases": {"fuzzing": {"extra-data-sources": {"responses": False}}},
})
schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)

RETURN_URL = "http://merchant.test/return"
TEST_VPAS = ["success@sandbox", "failure@sandbox", "timeout@sandbox"]
PUBLIC_WEBHOOK_URL = "http://93.184.215.14/fuzz-hook"  # a public address, as a literal: nothing resolves here


@dataclass
class World:
    """The fuzz merchant and real resources of it, for cases to name."""

    tm: factories.TestMerchant
    other: factories.TestMerchant
    paid_txn_id: str            # a SUCCESS card payment (sabpaisaTxnId) with one refund
    paid_payment_id: str        # its paymentId, for token creation
    refund_id: str
    token_id: str               # the saved card of the paid payment
    merchant_txn_ids: list[str]  # the paid payment, an open session, the S2S payments
    upi_links: list[str]        # of open S2S payments
    settlement_id: str          # a settlement of the paid payment and its refund


def _s2s_payment(merchant, merchant_txn_id: str):
    return s2s_payment_create(merchant=merchant, data={
        "merchantTxnId": merchant_txn_id, "amount": 12_345, "currency": "INR", "paymentMode": "UPI_QR",
        "customerName": "Fuzz Customer", "customerEmail": "fuzz@example.com", "customerPhone": "9876543210",
        "upiExpiryMinutes": 5})


@pytest.fixture
def world(transactional_db) -> World:
    tm = make_merchant(code="FUZZ", s2s=True, rate_limit=100_000)
    other = make_merchant(code="FUZZOTHER", s2s=True, rate_limit=100_000)
    merchant = tm.merchant
    session = hosted_payment_create(merchant=merchant, merchant_txn_id="FUZZ-PAID", amount=250_000,
                                    currency="INR", return_url=RETURN_URL)
    card = CardInput(number="4111111111111111", expiry_month=12, expiry_year=date.today().year + 3, cvv="123")
    paid = hosted_card_pay(payment=session.payment, card=card, save_card=True)
    paid = hosted_card_verify_otp(payment=paid, otp="123456")
    assert paid.status == "SUCCESS", paid.failure_reason
    token = payment_token_create(merchant=merchant, payment_id=paid.payment_id, consent_given=True,
                                 consent_timestamp=int(time.time()),
                                 consent_text="I agree to save my card.").token
    refund = refund_create(merchant=merchant, payment=paid, amount=10_000, refund_id="FUZZ-RF-1").refund
    hosted_payment_create(merchant=merchant, merchant_txn_id="FUZZ-OPEN", amount=50_000, currency="INR",
                          return_url=RETURN_URL)
    s2s = [_s2s_payment(merchant, f"FUZZ-S2S-{n}") for n in range(3)]
    settlement = Settlement.objects.create(
        acquirer="cashfree", merchant=merchant, processor_settlement_id="FUZZ-1", utr="UTRFUZZ1", gross=250_000,
        fees=5_000, tax=900, refunds=10_000, net=234_100, status="SUCCESS", settled_at=timezone.now())
    SettlementLine.objects.create(settlement=settlement, kind="payment", processor_event_id="FUZZ-E1",
                                  amount=250_000, fee=5_000, tax=900, payment=paid)
    SettlementLine.objects.create(settlement=settlement, kind="refund", processor_event_id="FUZZ-E2",
                                  amount=10_000, payment=paid, refund=refund)
    return World(tm=tm, other=other, paid_txn_id=paid.sabpaisa_txn_id, paid_payment_id=paid.payment_id,
                 refund_id=refund.refund_id, token_id=token.token_id,
                 merchant_txn_ids=["FUZZ-PAID", "FUZZ-OPEN", *(p.merchant_txn_id for p in s2s)],
                 upi_links=[upi_link(p) for p in s2s], settlement_id=settlement.public_id)


# --- fixing up a generated case --------------------------------------------------------------
# Hypothesis leans towards the first element of a sampled_from (its "simplest" choice), so the
# common answer always comes first.

AUTH_CHOICES = ["valid", "valid", "valid", "valid", "no key", "wrong key", "other merchant's header"]


def _mostly(draw, label: str) -> bool:
    """True in about three cases of four."""
    return draw(st.sampled_from([True, True, True, False]), label=label)


def _authenticate(case, draw, world: World) -> None:
    tm = world.tm
    choice = draw(st.sampled_from(AUTH_CHOICES), label="auth")
    headers = dict(case.headers or {})
    headers.update({"X-Api-Key": tm.api_key, "X-Merchant-Id": tm.code})
    if choice == "no key":
        del headers["X-Api-Key"]
    elif choice == "wrong key":
        headers["X-Api-Key"] = tm.api_key[:-4] + "XXXX"
    elif choice == "other merchant's header":
        headers["X-Merchant-Id"] = world.other.code
    case.headers = headers


def _real_ids(case, draw, world: World) -> None:
    """Name the merchant's real resources instead of the generated identifiers."""
    if not _mostly(draw, "real ids"):
        return
    body = case.body if isinstance(case.body, dict) else None
    query = case.query if isinstance(case.query, dict) else None
    path_parameters = case.path_parameters if isinstance(case.path_parameters, dict) else None
    op = (case.method.upper(), case.path)
    if op == ("GET", "/api/v2/payments") and query is not None:
        query["merchantTxnId"] = draw(st.sampled_from(world.merchant_txn_ids), label="merchantTxnId")
    elif op == ("POST", "/api/v2/payments/enquiry") and body is not None:
        body["merchantTxnId"] = draw(st.sampled_from(world.merchant_txn_ids), label="merchantTxnId")
    elif op == ("POST", "/api/v2/refunds") and body is not None:
        body["sabpaisaTxnId"] = world.paid_txn_id
        body.pop("transactionId", None)
        body.pop("txnId", None)
    elif op == ("GET", "/api/v2/refunds") and query is not None:
        query["sabpaisaTxnId"] = world.paid_txn_id
        query.pop("transactionId", None)
    elif op == ("GET", "/api/v2/refunds/{refundId}") and path_parameters is not None:
        path_parameters["refundId"] = world.refund_id
    elif op == ("GET", "/api/v2/settlements/{settlementId}") and path_parameters is not None:
        path_parameters["settlementId"] = world.settlement_id
    elif case.path == "/api/v2/tokens/{tokenId}" and path_parameters is not None:
        path_parameters["tokenId"] = world.token_id
    elif op == ("POST", "/api/v2/tokens") and body is not None:
        body["paymentId"] = world.paid_payment_id
        if isinstance(body.get("consent"), dict):
            body["consent"].update(consentGiven=True, consentTimestamp=int(time.time()))
    elif op == ("POST", "/sandbox/upi/pay") and body is not None:
        body["upiUri"] = draw(st.sampled_from(world.upi_links), label="upiUri")
        body["payerVpa"] = draw(st.sampled_from(TEST_VPAS), label="payerVpa")


def _unstatable(case, draw, world: World) -> None:
    """Values the document cannot state, drawn valid in every case it allows (it says them in
    words): what the clock says (a consent's time), the order of two values (toDate not before
    fromDate; two names of one value equal), the names of a metadata object's keys (OpenAPI
    3.0 has no propertyNames, and 3.1's JSON Schema would count 100.0 an integer, which the API
    refuses where paise belong), and which payments exist and may be paid now (a UPI link of
    an open payment nobody pays yet, a test VPA)."""
    body = case.body if isinstance(case.body, dict) else None
    query = case.query if isinstance(case.query, dict) else None
    op = (case.method.upper(), case.path)
    if op in (("POST", "/api/v2/payments"), ("POST", "/api/v2/payments/s2s")) and body is not None:
        if isinstance(body.get("metadata"), dict):  # its keys: OpenAPI 3.0 has no propertyNames
            body["metadata"] = {key: value for key, value in body["metadata"].items()
                                if 1 <= len(key) <= 40 and not CONTROL.search(key)}
        if body.get("webhookUrl"):  # a host that resolves, to a public address (no DNS here)
            body["webhookUrl"] = PUBLIC_WEBHOOK_URL
        if body.get("tokenId") is not None:  # a token of the merchant's
            body["tokenId"] = world.token_id
    elif op in (("GET", "/api/v2/refunds"), ("GET", "/api/v2/settlements"), ("GET", "/api/v2/disputes")) \
            and query is not None:
        if query.get("fromDate") and query.get("toDate") and str(query["toDate"]) < str(query["fromDate"]):
            query["fromDate"], query["toDate"] = query["toDate"], query["fromDate"]
    elif op == ("POST", "/api/v2/refunds") and body is not None:
        names = [name for name in ("sabpaisaTxnId", "transactionId", "txnId") if name in body]
        for name in names[1:]:
            body[name] = body[names[0]]
        if "refundAmount" in body and "amount" in body:
            body["amount"] = body["refundAmount"]
    elif op == ("POST", "/api/v2/tokens") and body is not None and isinstance(body.get("consent"), dict):
        body["consent"]["consentTimestamp"] = int(time.time())
    elif op == ("POST", "/sandbox/upi/pay") and body is not None:
        fresh = _s2s_payment(world.tm.merchant, f"FUZZ-PAY-{time.monotonic_ns()}")
        body["upiUri"] = upi_link(fresh)
        body["payerVpa"] = draw(st.sampled_from(TEST_VPAS), label="payerVpa")


def _sign(case, draw, world: World) -> None:
    """Name the merchant and sign, as a merchant's server would."""
    if not _mostly(draw, "signed"):
        return
    tm = world.tm
    body = case.body if isinstance(case.body, dict) else None
    query = case.query if isinstance(case.query, dict) else None
    op = (case.method.upper(), case.path)
    now = int(time.time())
    if op in (("POST", "/api/v2/payments"), ("POST", "/api/v2/payments/s2s")) and body is not None:
        body.update(merchantId=tm.code, timestamp=now)
        body["checksum"] = compute_checksum(tm.secret_key, tm.code, body.get("merchantTxnId"), body.get("amount"),
                                            body.get("currency"), now)
    elif op == ("POST", "/api/v2/payments/enquiry") and body is not None:
        body.pop("clientCode", None)
        body.update(merchantId=tm.code, timestamp=now)
        body["checksum"] = compute_checksum(tm.secret_key, tm.code, body.get("merchantTxnId"), 0, "INR", now)
    elif op == ("POST", "/api/v2/refunds") and body is not None:
        body.update(merchantId=tm.code, timestamp=now)
        txn_id = body.get("sabpaisaTxnId", body.get("transactionId"))
        body["checksum"] = compute_checksum(tm.secret_key, tm.code, txn_id, body.get("refundId") or "", now)
    elif op == ("GET", "/api/v2/refunds/{refundId}") and query is not None:
        query.update(merchantId=tm.code, timestamp=str(now))
        query["checksum"] = compute_checksum(tm.secret_key, tm.code, case.path_parameters.get("refundId"), now)
    elif op == ("GET", "/api/v2/settlements") and query is not None:
        query.update(merchantId=tm.code, timestamp=str(now))
        query["checksum"] = compute_checksum(tm.secret_key, tm.code, query.get("fromDate") or "",
                                             query.get("toDate") or "", now)
    elif op == ("GET", "/api/v2/settlements/{settlementId}") and query is not None:
        query.update(merchantId=tm.code, timestamp=str(now))
        query["checksum"] = compute_checksum(tm.secret_key, tm.code, case.path_parameters.get("settlementId"), now)
    elif query is not None and "merchantId" in query:
        query["merchantId"] = tm.code


# --- the test ----------------------------------------------------------------------------------

ANSWERS: Counter = Counter()


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if FUZZ_REPORT:
        print("\nanswers per operation (status, errorCode):")
        for (operation, status, code), count in sorted(ANSWERS.items()):
            print(f"  {operation:40} {status} {code or '':28} {count}")


def _tally(case, response) -> None:
    try:
        code = response.json().get("errorCode") if response.status_code >= 400 else None
    except (ValueError, AttributeError):
        code = "(not JSON)"
    ANSWERS[(f"{case.method.upper()} {case.path}", response.status_code, code)] += 1


@schema.parametrize()
@schema.given(data=st.data())
@settings(max_examples=FUZZ_EXAMPLES, derandomize=FUZZ_DERANDOMIZE, deadline=None, database=None,
          print_blob=True, suppress_health_check=list(HealthCheck))
def test_api(case, data, world):
    _authenticate(case, data.draw, world)
    _real_ids(case, data.draw, world)
    _sign(case, data.draw, world)
    if case.meta is not None and case.meta.generation.mode.is_positive:
        _unstatable(case, data.draw, world)
    response = case.call()
    _tally(case, response)
    case.validate_response(response, checks=CHECKS)
