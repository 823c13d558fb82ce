"""X-Idempotency-Key: one request, one payment, however often and however concurrently it is sent."""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from payments.models import IdempotencyRecord, Payment
from payments.services.idempotency import (
    IDEMPOTENCY_TTL,
    idempotency_records_delete_expired,
    idempotency_run,
    request_fingerprint,
)
from payments.tasks import idempotency_records_cleanup
from tests.payments.s2s.conftest import URL, assert_error
from tests.support.factories import make_merchant, now, signed_body


def resign(tm, body: dict, **changes) -> dict:
    """The same request signed afresh (a new timestamp and checksum), as a retry would be."""
    body = {**body, **changes}
    body.pop("checksum")
    return signed_body(tm, **body)


def test_the_same_key_and_body_returns_the_original_response_and_creates_nothing(s2s_merchant, post):
    body = signed_body(s2s_merchant)
    first = post(s2s_merchant, body, key="order-1")
    second = post(s2s_merchant, body, key="order-1")
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()  # traceId included: it is the original response
    assert second["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert second["X-Trace-Id"] != first.json()["traceId"]  # this request has its own, in the header
    assert Payment.objects.count() == 1


def test_a_retry_signed_afresh_is_the_same_body(s2s_merchant, post):
    body = signed_body(s2s_merchant, timestamp=now() - 100)
    first = post(s2s_merchant, body, key="k")
    retry = resign(s2s_merchant, body, timestamp=now())
    assert retry["checksum"] != body["checksum"]
    assert post(s2s_merchant, retry, key="k").json() == first.json()
    assert Payment.objects.count() == 1


def test_key_order_and_whitespace_do_not_make_another_body(s2s_merchant, post):
    body = signed_body(s2s_merchant, metadata={"a": 1, "b": 2})
    first = post(s2s_merchant, body, key="k").json()
    reordered = json.dumps(dict(reversed(list(body.items()))), indent=2).encode()
    assert post(s2s_merchant, None, key="k", raw=reordered).json() == first


@pytest.mark.parametrize("change", [{"amount": 12346}, {"udf3": "x"}, {"customerName": "Asha R"},
                                    {"metadata": {"a": 1}}, {"paymentMode": "UPI_INTENT"}])
def test_the_same_key_with_another_body_is_idempotency_mismatch(s2s_merchant, post, change):
    body = signed_body(s2s_merchant)
    assert post(s2s_merchant, body, key="k").status_code == 201
    assert_error(post(s2s_merchant, resign(s2s_merchant, body, **change), key="k"), "IDEMPOTENCY_MISMATCH")
    assert Payment.objects.count() == 1


def test_a_json_type_change_is_another_body(s2s_merchant, post):
    body = signed_body(s2s_merchant, upiExpiryMinutes=5)
    post(s2s_merchant, body, key="k")
    same_value_other_type = resign(s2s_merchant, body, upiExpiryMinutes=None)
    assert_error(post(s2s_merchant, same_value_other_type, key="k"), "IDEMPOTENCY_MISMATCH")


def test_a_replay_returns_the_original_response_even_after_the_payment_moved_on(s2s_merchant, post):
    body = signed_body(s2s_merchant)
    first = post(s2s_merchant, body, key="k").json()
    Payment.objects.update(status="FAILED")
    assert post(s2s_merchant, body, key="k").json() == first


def test_another_key_with_the_same_merchant_txn_id_is_duplicate_transaction(s2s_merchant, post):
    body = signed_body(s2s_merchant)
    post(s2s_merchant, body, key="k1")
    assert_error(post(s2s_merchant, body, key="k2"), "DUPLICATE_TRANSACTION")
    # Not remembered: the key is free for another request.
    assert post(s2s_merchant, signed_body(s2s_merchant), key="k2").status_code == 201


def test_keys_belong_to_one_merchant(s2s_merchant, other_merchant, post):
    assert post(s2s_merchant, signed_body(s2s_merchant), key="shared").status_code == 201
    assert post(other_merchant, signed_body(other_merchant), key="shared").status_code == 201
    assert Payment.objects.count() == 2


def test_a_refused_request_does_not_use_up_its_key(s2s_merchant, post):
    bad = signed_body(s2s_merchant, amount=1)
    assert_error(post(s2s_merchant, bad, key="k"), "VALIDATION_ERROR")
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, timestamp=now() - 999), key="k"), "REQUEST_EXPIRED")
    assert not IdempotencyRecord.objects.exists()
    assert post(s2s_merchant, signed_body(s2s_merchant), key="k").status_code == 201


def test_a_key_is_not_taken_inside_a_callers_transaction(s2s_merchant):
    # Its record would commit with the caller's (or roll back with it), unseen by the other
    # requests with that key meanwhile: refused before the key is taken or anything runs.
    created = []
    with transaction.atomic(), pytest.raises(RuntimeError, match="outside any transaction"):
        idempotency_run(merchant=s2s_merchant.merchant, key="inside-a-transaction", fingerprint=request_fingerprint({}),
                        create=lambda lease: created.append(lease) or (201, {}))
    assert created == []
    assert not IdempotencyRecord.objects.filter(key="inside-a-transaction").exists()


def test_records_are_kept_24_hours_and_then_deleted(s2s_merchant, post):
    before = timezone.now()
    post(s2s_merchant, signed_body(s2s_merchant), key="k")
    record = IdempotencyRecord.objects.get()
    assert IDEMPOTENCY_TTL == timedelta(hours=24)
    assert record.expires_at >= before + timedelta(hours=24)
    assert record.payment == Payment.objects.get()
    assert idempotency_records_delete_expired(now=record.expires_at - timedelta(seconds=1)) == 0
    assert idempotency_records_delete_expired(now=record.expires_at) == 1
    assert not IdempotencyRecord.objects.exists()
    assert Payment.objects.count() == 1  # only the record goes


def test_the_beat_task_deletes_expired_records_in_batches(s2s_merchant):
    old = timezone.now() - timedelta(seconds=1)
    IdempotencyRecord.objects.bulk_create(
        [IdempotencyRecord(merchant=s2s_merchant.merchant, key=f"k{i}", fingerprint="f", expires_at=old)
         for i in range(25)]
        + [IdempotencyRecord(merchant=s2s_merchant.merchant, key="fresh", fingerprint="f",
                             expires_at=timezone.now() + IDEMPOTENCY_TTL)])
    assert idempotency_records_delete_expired(batch_size=10) == 25
    assert idempotency_records_cleanup() == 0
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["fresh"]


def test_a_record_past_its_time_but_not_yet_deleted_counts_as_absent(s2s_merchant, post):
    post(s2s_merchant, signed_body(s2s_merchant), key="k")
    IdempotencyRecord.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    other = post(s2s_merchant, signed_body(s2s_merchant), key="k")
    assert other.status_code == 201
    assert Payment.objects.count() == 2
    assert IdempotencyRecord.objects.get().expires_at > timezone.now() + timedelta(hours=23)


def test_a_record_left_by_a_request_that_died_is_run_again(s2s_merchant, post):
    from payments.services.idempotency import request_fingerprint

    body = signed_body(s2s_merchant)
    IdempotencyRecord.objects.create(merchant=s2s_merchant.merchant, key="k", fingerprint=request_fingerprint(body),
                                     expires_at=timezone.now() + IDEMPOTENCY_TTL)
    assert post(s2s_merchant, body, key="k").status_code == 201
    assert Payment.objects.count() == 1


# --- real concurrency: threads against a live server on PostgreSQL ---------------------------

def _send_all(live_server, tm, bodies_and_keys, timeout=60):
    """Send every (body, key) at once from its own thread; returns [(status, json, seconds)]."""
    barrier = threading.Barrier(len(bodies_and_keys))
    results = [None] * len(bodies_and_keys)

    def send(i, body, key):
        headers = dict(tm.http_headers)
        if key:
            headers["X-Idempotency-Key"] = key
        request = urllib.request.Request(live_server.url + URL, data=json.dumps(body).encode(), headers=headers,
                                         method="POST")
        barrier.wait()
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                results[i] = (response.status, json.loads(response.read()), time.monotonic() - started,
                              response.headers.get("Idempotent-Replayed"))
        except urllib.error.HTTPError as error:
            results[i] = (error.code, json.loads(error.read()), time.monotonic() - started, None)

    threads = [threading.Thread(target=send, args=(i, b, k)) for i, (b, k) in enumerate(bodies_and_keys)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 5)
    elapsed = time.monotonic() - started
    assert all(results), "a request got no answer"
    slowest = max(r[2] for r in results)
    print("latencies (s):", " ".join(f"{r[2]:.3f}" for r in sorted(results, key=lambda r: r[2])))
    print(f"\n{len(results)} concurrent requests: {elapsed:.3f} s wall, slowest {slowest:.3f} s, "
          f"statuses {dict(Counter(r[0] for r in results))}")
    return results


@pytest.fixture
def live_merchant(transactional_db):
    return make_merchant(name="Concurrent Tea")


def test_twenty_concurrent_requests_with_one_key_create_one_payment_and_all_succeed(live_server, live_merchant):
    body = signed_body(live_merchant)
    results = _send_all(live_server, live_merchant, [(body, "same-key")] * 20)
    assert [status for status, *_ in results] == [201] * 20
    assert len({data["paymentId"] for _, data, *_ in results}) == 1
    assert len({json.dumps(data, sort_keys=True) for _, data, *_ in results}) == 1  # byte-for-byte one response
    assert Counter(replayed for *_, replayed in results) == {"true": 19, None: 1}
    assert Payment.objects.count() == 1
    assert IdempotencyRecord.objects.get().payment == Payment.objects.get()


@pytest.mark.parametrize("with_keys", [True, False], ids=["different-keys", "no-keys"])
def test_twenty_concurrent_requests_with_one_merchant_txn_id_create_one_payment(live_server, live_merchant, with_keys):
    body = signed_body(live_merchant)
    results = _send_all(live_server, live_merchant, [(body, f"key-{i}" if with_keys else None) for i in range(20)])
    codes = Counter(data.get("errorCode", "OK") for _, data, *_ in results)
    assert codes == {"OK": 1, "DUPLICATE_TRANSACTION": 19}
    assert {status for status, *_ in results} == {201, 400}
    assert Payment.objects.count() == 1
    assert IdempotencyRecord.objects.count() == (1 if with_keys else 0)  # the 19 gave their keys back


def test_concurrent_requests_with_one_key_and_different_bodies_create_one_payment(live_server, live_merchant):
    bodies = [signed_body(live_merchant, merchantTxnId=f"MIX-{i % 2}") for i in range(10)]
    results = _send_all(live_server, live_merchant, [(b, "contested") for b in bodies])
    payment = Payment.objects.get()
    for (status, data, *_), body in zip(results, bodies):
        if body["merchantTxnId"] == payment.merchant_txn_id:
            assert (status, data["paymentId"]) == (201, payment.payment_id)
        else:
            assert data["errorCode"] == "IDEMPOTENCY_MISMATCH"


def test_requests_with_one_key_wait_for_a_slow_first_one_and_answer_with_its_response(live_server, live_merchant,
                                                                                     monkeypatch):
    """The acquirer takes half a second: the other 19 are certainly waiting on the key's row
    lock meanwhile, and must neither fail nor ask the acquirer again."""
    from payments.acquirer.sandbox.acquirer import SandboxAcquirer

    calls = []
    register = SandboxAcquirer.upi_register

    def slow_register(self, *, payment):
        calls.append(payment.merchant_txn_id)
        time.sleep(0.5)
        return register(self, payment=payment)

    monkeypatch.setattr(SandboxAcquirer, "upi_register", slow_register)
    body = signed_body(live_merchant)
    results = _send_all(live_server, live_merchant, [(body, "slow-key")] * 20)
    assert [status for status, *_ in results] == [201] * 20
    assert len({data["paymentId"] for _, data, *_ in results}) == 1
    assert calls == [body["merchantTxnId"]]
    assert Payment.objects.count() == 1
