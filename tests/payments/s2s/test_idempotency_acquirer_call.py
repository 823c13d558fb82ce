"""X-Idempotency-Key without a database lock across the acquirer call (STYLE.md: never hold a
row lock across a call to the acquirer). The key's record is marked in flight and committed,
the acquirer is called with no transaction open, and the payment and the stored response are
written afterwards; requests with the same key meanwhile wait for that response."""
from __future__ import annotations

import json
import threading
import urllib.request
from collections import Counter
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from payments.models import IdempotencyRecord, Payment
from payments.services import idempotency
from tests.payments.s2s.conftest import URL, assert_error
from tests.support.factories import make_merchant, signed_body

pytestmark = pytest.mark.django_db(transaction=True)


def _other_connection() -> psycopg.Connection:
    """A second session on the test database, as another request or an operator would be."""
    params = connection.settings_dict
    return psycopg.connect(dbname=params["NAME"], user=params["USER"], password=params["PASSWORD"],
                           host=params["HOST"] or None, port=params["PORT"] or None)


def _look_from_outside(key: str) -> dict:
    """From another session: lock the key's record with NOWAIT (fails at once if anyone holds
    its lock) and count the sessions on this database idle inside an open transaction."""
    with _other_connection() as other:
        try:
            rows = other.execute("SELECT response_body IS NULL FROM payments_idempotencyrecord "
                                 "WHERE key = %s FOR UPDATE NOWAIT", [key]).fetchall()
            lockable = True
        except psycopg.errors.LockNotAvailable:
            rows, lockable = [], False
        other.rollback()
        idle_in_transaction = other.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%%'").fetchone()[0]
    return {"lockable": lockable, "in_flight": rows == [(True,)], "idle_in_transaction": idle_in_transaction}


def test_no_transaction_or_row_lock_is_open_while_the_acquirer_registers_a_keyed_payment(api, monkeypatch):
    tm = make_merchant(name="No Lock Tea")
    register = SandboxAcquirer.upi_register
    seen = []

    def watched_register(self, *, payment):
        seen.append({"in_atomic_block": connection.in_atomic_block, **_look_from_outside("watched-key")})
        return register(self, payment=payment)

    monkeypatch.setattr(SandboxAcquirer, "upi_register", watched_register)
    response = api.post(URL, json.dumps(signed_body(tm)), content_type="application/json",
                        HTTP_X_IDEMPOTENCY_KEY="watched-key", **tm.headers)

    assert response.status_code == 201, response.json()
    assert seen == [{"in_atomic_block": False, "lockable": True, "in_flight": True, "idle_in_transaction": 0}]
    record = IdempotencyRecord.objects.get()
    assert record.response_body == response.json() and record.payment == Payment.objects.get()
    assert record.expires_at > timezone.now() + timedelta(hours=23)  # kept 24 h once answered


def test_a_refused_start_gives_the_in_flight_key_back(api):
    tm = make_merchant(name="Refused Tea")
    response = api.post(URL, json.dumps(signed_body(tm, amount=100001)), content_type="application/json",
                        HTTP_X_IDEMPOTENCY_KEY="refused-key", **tm.headers)
    assert response.json()["errorCode"] == "PAYMENT_FAILED"
    assert not IdempotencyRecord.objects.exists()


def test_a_request_that_died_in_flight_is_taken_over_once_its_lease_has_run_out(api):
    tm = make_merchant(name="Lease Tea")
    body = signed_body(tm)
    # A request marked the key in flight and died during the acquirer call.
    IdempotencyRecord.objects.create(merchant=tm.merchant, key="died", fingerprint=idempotency.request_fingerprint(body),
                                     expires_at=timezone.now() - timedelta(seconds=1))
    response = api.post(URL, json.dumps(body), content_type="application/json", HTTP_X_IDEMPOTENCY_KEY="died",
                        **tm.headers)
    assert response.status_code == 201
    assert IdempotencyRecord.objects.get().payment == Payment.objects.get()


def test_a_taken_merchant_txn_id_is_refused_before_the_acquirer_however_the_key_was_taken(api, monkeypatch):
    """merchantTxnId is asked in the statement that takes a new key, and by a query of its own
    when a lapsed key is taken over: either way DUPLICATE_TRANSACTION, no acquirer call, and
    the key given back."""
    tm = make_merchant(name="Taken Tea")
    first = signed_body(tm)
    post = lambda body, key: api.post(URL, json.dumps(body), content_type="application/json",  # noqa: E731
                                      HTTP_X_IDEMPOTENCY_KEY=key, **tm.headers)
    assert post(first, "first").status_code == 201
    calls = []
    original = SandboxAcquirer.upi_register
    monkeypatch.setattr(SandboxAcquirer, "upi_register", lambda self, **kw: calls.append(1) or original(self, **kw))
    again = signed_body(tm, merchantTxnId=first["merchantTxnId"], amount=first["amount"] + 100)
    IdempotencyRecord.objects.create(merchant=tm.merchant, key="lapsed", fingerprint=idempotency.request_fingerprint(again),
                                     expires_at=timezone.now() - timedelta(seconds=1))
    for key in ("new", "lapsed"):
        assert_error(post(again, key), "DUPLICATE_TRANSACTION")
    assert calls == [] and Payment.objects.count() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["first"]


def test_a_request_whose_lease_ran_out_mid_call_is_not_sent_to_the_acquirer_twice(api, monkeypatch):
    """The acquirer outlasted the lease and a retry with the key took it over. The retry finds
    the merchantTxnId still claimed by the slow request and is told to retry (no second acquirer
    call, which at a processor would open a second order, issue 28); the slow one, its key
    lost, writes nothing and is told the same. The next retry creates the payment under the
    ids the acquirer already saw, so the processor's idempotency answers it."""
    tm = make_merchant(name="Slow Tea")
    body = signed_body(tm)
    register = SandboxAcquirer.upi_register
    calls, overtaken = [], []

    def slow_then_overtaken(self, *, payment):
        calls.append(payment.sabpaisa_txn_id)
        if len(calls) == 1:
            IdempotencyRecord.objects.update(expires_at=timezone.now() - timedelta(seconds=1))  # lease over
            overtaken.append(api.post(URL, json.dumps(body), content_type="application/json",
                                      HTTP_X_IDEMPOTENCY_KEY="overtaken", **tm.headers))
        return register(self, payment=payment)

    monkeypatch.setattr(SandboxAcquirer, "upi_register", slow_then_overtaken)
    post = lambda body: api.post(URL, json.dumps(body), content_type="application/json",  # noqa: E731
                                 HTTP_X_IDEMPOTENCY_KEY="overtaken", **tm.headers)
    response = post(body)
    assert overtaken[0].json()["errorCode"] == "SERVICE_UNAVAILABLE" and len(calls) == 1
    assert response.json()["errorCode"] == "SERVICE_UNAVAILABLE" and not Payment.objects.exists()
    again = post(signed_body(tm, merchantTxnId=body["merchantTxnId"], timestamp=body["timestamp"] - 1))
    assert again.status_code == 201, again.json()
    assert calls == [calls[0], calls[0]] and Payment.objects.get().sabpaisa_txn_id == calls[0]


def test_a_request_whose_lease_went_to_another_body_writes_nothing_and_is_service_unavailable(api, monkeypatch):
    """The acquirer outlasted the lease and a request with the same key but another body (a
    later order) took the key and created its payment. The slow request's payment is rolled
    back with the response it could not store: one payment, and the slow one asked to retry."""
    tm = make_merchant(name="Slow Chai")
    slow_body, other_body = signed_body(tm), signed_body(tm)
    register = SandboxAcquirer.upi_register
    calls = []

    def slow_then_overtaken(self, *, payment):
        calls.append(payment.merchant_txn_id)
        if len(calls) == 1:
            IdempotencyRecord.objects.update(expires_at=timezone.now() - timedelta(seconds=1))  # lease over
            overtaking = api.post(URL, json.dumps(other_body), content_type="application/json",
                                  HTTP_X_IDEMPOTENCY_KEY="shared", **tm.headers)
            assert overtaking.status_code == 201
        return register(self, payment=payment)

    monkeypatch.setattr(SandboxAcquirer, "upi_register", slow_then_overtaken)
    response = api.post(URL, json.dumps(slow_body), content_type="application/json", HTTP_X_IDEMPOTENCY_KEY="shared",
                        **tm.headers)
    assert response.status_code == 400 and response.json()["errorCode"] == "SERVICE_UNAVAILABLE", response.json()
    assert list(Payment.objects.values_list("merchant_txn_id", flat=True)) == [other_body["merchantTxnId"]]
    record = IdempotencyRecord.objects.get()
    assert record.payment.merchant_txn_id == other_body["merchantTxnId"] and record.response_body is not None


def test_requests_waiting_on_a_slow_acquirer_hold_no_lock_and_all_answer_with_the_first_response(
        live_server, monkeypatch):
    """Twenty requests with one key while the acquirer is slow: one acquirer call, one payment,
    nineteen replays, and while the acquirer works nobody holds the key's row or sits idle in a
    transaction."""
    tm = make_merchant(name="Slow Queue Tea")
    register = SandboxAcquirer.upi_register
    waiting_threads = set()
    all_waiting = threading.Event()
    seen = []

    def slow_register(self, *, payment):
        # Keep the acquirer busy until each of the other 19 requests has found the key in
        # flight at least once (a generous bound only a broken build reaches, not a timing).
        all_waiting.wait(timeout=30)
        seen.append(_look_from_outside("queue-key"))
        return register(self, payment=payment)

    original_claim = idempotency._claim

    def counting_claim(*args, **kwargs):
        result = original_claim(*args, **kwargs)
        if result is idempotency._BUSY:
            waiting_threads.add(threading.get_ident())
            if len(waiting_threads) >= 19:
                all_waiting.set()
        return result

    monkeypatch.setattr(SandboxAcquirer, "upi_register", slow_register)
    monkeypatch.setattr(idempotency, "_claim", counting_claim)
    body = json.dumps(signed_body(tm)).encode()
    results = [None] * 20
    barrier = threading.Barrier(20)

    def send(i):
        request = urllib.request.Request(live_server.url + URL, data=body, method="POST",
                                         headers={**tm.http_headers, "X-Idempotency-Key": "queue-key"})
        barrier.wait()
        with urllib.request.urlopen(request, timeout=60) as answer:
            results[i] = (answer.status, json.loads(answer.read()), answer.headers.get("Idempotent-Replayed"))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(65)

    assert all(results), "a request got no answer"
    assert {status for status, *_ in results} == {201}
    assert len({data["paymentId"] for _, data, _ in results}) == 1
    assert Counter(replayed for *_, replayed in results) == {"true": 19, None: 1}
    assert seen == [{"lockable": True, "in_flight": True, "idle_in_transaction": 0}]
    assert Payment.objects.count() == 1
