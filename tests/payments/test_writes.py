"""payments.writes: the hot paths keep their round trips (gateway/perf/sql.py says why they
matter), counted on the real PostgreSQL through the API; the enquiry reads one row, its refund
totals being the payment's own columns."""
from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from payments.acquirer.base import AcquirerRefused
from payments.models import IdempotencyRecord
from tests.support.factories import make_merchant, session_body, signed_body

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def tm(db):
    return make_merchant(name="Round Trip Tea")


def _statements(call) -> tuple[object, list[str]]:
    call()  # once first: the API key's row and the statements' texts are then cached
    with CaptureQueriesContext(connection) as captured:
        response = call()
    return response, [q["sql"] for q in captured.captured_queries]


def _s2s(api, tm, keys=None):
    """A poster of new S2S requests of `tm`, each with the next of `keys` as its key if given."""
    headers = {name: value for name, value in tm.headers.items() if name != "CONTENT_TYPE"}

    def post():
        key = {} if keys is None else {"HTTP_X_IDEMPOTENCY_KEY": next(keys)}
        return api.generic("POST", "/api/v2/payments/s2s", json.dumps(signed_body(tm)),
                           content_type="application/json", **headers, **key)

    return post


def _without_the_claim(statements):
    """The statements less the merchantTxnId claim (payments.services.txn_claims: committed on
    its own before the acquirer is called, so concurrent duplicates never leave an orphan order
    at the processor), which the creation's own statements follow. The claim is one statement,
    committed by itself: with the ORM's BEGIN and COMMIT around it, it was three."""
    claim = [s for s in statements if '"payments_merchanttxnclaim"' in s]
    assert len(claim) == 1 and claim[0].startswith("INSERT") and "BEGIN" not in statements, statements
    return [s for s in statements if s not in claim]


def _claim_asks_for_the_payment(statements) -> bool:
    """Whether the claim's statement asks, in its RETURNING list, whether a payment has the
    merchantTxnId already."""
    claim = next(s for s in statements if '"payments_merchanttxnclaim"' in s)
    return 'RETURNING' in claim and 'EXISTS (SELECT 1 FROM "payments_payment"' in claim.split("RETURNING", 1)[1]


def test_s2s_creation_statements_stay_within_the_drivers_cache_of_converted_statements(api, tm):
    """psycopg converts a statement's text (its placeholders found, split and reassembled) once
    and caches it, but only up to MAX_CACHED_STATEMENT_PARAMS parameters: the payment's insert,
    with its two events, parsed its whole text again on every creation at 53 (54 with an
    X-Idempotency-Key). sql._constants writes the values still empty at creation without one."""
    from psycopg._queries import MAX_CACHED_STATEMENT_LENGTH, MAX_CACHED_STATEMENT_PARAMS

    for keys, kinds in [(None, ["INSERT", "WITH"]), (iter(["cache-1", "cache-2"]), ["INSERT", "INSERT", "WITH"])]:
        executed = []

        def record(execute, sql, params, many, context):
            executed.append((sql, len(params or ())))
            return execute(sql, params, many, context)

        post = _s2s(api, tm, keys=keys)
        post()
        with connection.execute_wrapper(record):
            assert post().status_code == 201
        assert [sql.split(" ", 1)[0] for sql, _ in executed] == kinds, executed
        for sql, count in executed:
            assert count <= MAX_CACHED_STATEMENT_PARAMS and len(sql) <= MAX_CACHED_STATEMENT_LENGTH, (count, sql)


def test_s2s_creation_is_the_claim_and_one_statement_without_an_idempotency_key_and_two_with(api, tm):
    # Without a key: whether merchantTxnId is taken is asked in the claim's own statement, then
    # the payment and its events in one.
    response, plain = _statements(_s2s(api, tm))
    assert _claim_asks_for_the_payment(plain), plain
    plain = _without_the_claim(plain)
    assert response.status_code == 201 and len(plain) == 1, plain
    assert plain[0].startswith("WITH p AS (INSERT")
    response, keyed = _statements(_s2s(api, tm, keys=iter(["rt-1", "rt-2"])))
    keyed = _without_the_claim(keyed)
    assert response.status_code == 201 and len(keyed) == 2, keyed
    # The key taken (with merchantTxnId asked in the same statement), then the payment, its
    # events and the stored response in one.
    assert keyed[0].startswith('INSERT INTO "payments_idempotencyrecord"') and "EXISTS" in keyed[0]
    assert keyed[1].startswith('WITH c AS (UPDATE "payments_idempotencyrecord"')


def test_a_hosted_session_is_one_statement_and_the_enquiry_one_more(api, tm):
    numbers = iter(range(10))
    create = lambda: api.post("/api/v2/payments", session_body(tm, merchantTxnId=f"RT-{next(numbers)}"),  # noqa: E731
                              format="json", HTTP_X_API_KEY=tm.api_key)
    response, statements = _statements(create)
    assert response.status_code == 200 and len(statements) == 1, statements
    enquiry = lambda: api.get("/api/v2/payments", {"merchantId": tm.code, "merchantTxnId": "RT-1"},  # noqa: E731
                              HTTP_X_API_KEY=tm.api_key)
    response, statements = _statements(enquiry)
    assert response.status_code == 200 and len(statements) == 1, statements
    # One row of one table: the refund totals are the payment's own columns.
    assert statements[0].count("FROM") == 1 and '"refunds_refund"' not in statements[0], statements


def test_a_refusal_by_the_acquirer_gives_the_key_back_without_reading_it_again(api, tm, monkeypatch):
    """Before the creation starts writing, a refusal needs no look at whether another request
    took the key over: the key is given back at once."""
    def refuse(self, *, payment):
        raise AcquirerRefused("declined")

    monkeypatch.setattr(SandboxAcquirer, "upi_register", refuse)
    response, statements = _statements(_s2s(api, tm, keys=iter(["refused-1", "refused-2"])))
    assert response.status_code == 400 and response.json()["errorCode"] == "PAYMENT_FAILED"
    assert not any(s.startswith("SELECT") for s in statements), statements
    assert any(s.startswith('DELETE FROM "payments_idempotencyrecord"') for s in statements), statements
    assert not IdempotencyRecord.objects.exists()
