"""Refunds racing over real HTTP against the real PostgreSQL: the payment's row lock keeps the
sum of refunds within the paid amount, and every loser gets an answer, never a 500."""
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from refunds.models import Refund
from tests.refunds.conftest import http
from tests.support.factories import make_success_payment, refund_body


def _race(live_server, merchant, bodies, *, headers=None):
    """POST every body at once (a barrier releases the threads together); [(status, json)]."""
    barrier = threading.Barrier(len(bodies))
    url = live_server.url + "/api/v2/refunds"
    all_headers = {"X-Api-Key": merchant.api_key, "Content-Type": "application/json", **(headers or {})}

    def send(body):
        barrier.wait(timeout=30)
        return http("POST", url, body=body, headers=all_headers)

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return list(pool.map(send, bodies))


def test_ten_concurrent_refunds_never_exceed_the_paid_amount(live_server, transactional_db, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    results = _race(live_server, merchant, [refund_body(merchant, payment, refundAmount=3_000)] * 10)
    statuses = sorted(status for status, _ in results)
    assert 500 not in statuses
    accepted = [body for status, body in results if status == 200]
    refused = [body for status, body in results if status != 200]
    assert len(accepted) == 3  # 3 x 3000 fit in 10000; a fourth would not
    assert {body["errorCode"] for body in refused} == {"REFUND_AMOUNT_EXCEEDED"}
    assert len(refused) == 7
    assert sum(Refund.objects.filter(payment=payment).values_list("amount", flat=True)) == 9_000


def test_concurrent_full_refunds_refund_the_payment_once(live_server, transactional_db, merchant):
    payment = make_success_payment(merchant, amount=5_000)
    results = _race(live_server, merchant, [refund_body(merchant, payment)] * 10)
    assert sorted(status for status, _ in results) == [200] + [400] * 9
    assert Refund.objects.filter(payment=payment).get().amount == 5_000


def test_concurrent_repeats_of_one_refund_id_create_one_refund(live_server, transactional_db, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    body = refund_body(merchant, payment, refundAmount=2_500, refundId="RACE-1")
    results = _race(live_server, merchant, [body] * 8)
    assert [status for status, _ in results] == [200] * 8
    assert {answer["refundId"] for _, answer in results} == {"RACE-1"}
    assert Refund.objects.filter(payment=payment).count() == 1


def test_one_refund_id_raced_on_two_payments_creates_one_refund(live_server, transactional_db, merchant):
    first, second = make_success_payment(merchant), make_success_payment(merchant)
    bodies = [refund_body(merchant, payment, refundAmount=500, refundId="RACE-2")
              for payment in (first, second) for _ in range(4)]
    results = _race(live_server, merchant, bodies)
    assert 500 not in [status for status, _ in results]
    refund = Refund.objects.get(refund_id="RACE-2")
    winners = [body for status, body in results if status == 200]
    assert {body["sabpaisaTxnId"] for body in winners} == {refund.payment.sabpaisa_txn_id}
    assert {body["errorCode"] for status, body in results if status != 200} <= {"DUPLICATE_REFUND"}


def _wait_for_a_blocked_backend(timeout: float = 30.0) -> None:
    """Until some other session of this database waits on a lock (the unique index)."""
    import time

    from django.db import connection

    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()")
            if cursor.fetchone()[0]:
                return
            time.sleep(0.05)
    raise AssertionError("the second request never waited on the first")


def test_refund_id_inserted_by_another_transaction_is_answered_as_a_repeat(transactional_db, merchant):
    """The second request waits for the first to commit (on a row lock or on the unique
    (merchant, refundId) index), then answers DUPLICATE_REFUND, never an IntegrityError."""
    from django.db import connection, transaction

    from gateway.core.errors import DuplicateRefund
    from refunds.services import refund_create

    first, second = make_success_payment(merchant), make_success_payment(merchant)
    inserted, may_commit = threading.Event(), threading.Event()
    outcome = {}

    def hold_first_uncommitted():
        try:
            with transaction.atomic():
                refund_create(merchant=merchant.merchant, payment=first, amount=500, refund_id="RACE-3")
                inserted.set()
                may_commit.wait(timeout=30)
        finally:
            connection.close()

    def second_request():
        try:
            refund_create(merchant=merchant.merchant, payment=second, amount=500, refund_id="RACE-3")
            outcome["result"] = "created"
        except DuplicateRefund:
            outcome["result"] = "mismatch"
        finally:
            connection.close()

    holder = threading.Thread(target=hold_first_uncommitted)
    holder.start()
    try:
        assert inserted.wait(timeout=30)
        contender = threading.Thread(target=second_request)
        contender.start()
        _wait_for_a_blocked_backend()
    finally:
        may_commit.set()
        holder.join(timeout=30)
    contender.join(timeout=30)
    assert outcome == {"result": "mismatch"}
    assert Refund.objects.get(refund_id="RACE-3").payment_id == first.pk


def test_concurrent_repeats_of_one_idempotency_key_create_one_refund(live_server, transactional_db, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    body = refund_body(merchant, payment, refundAmount=2_000)
    results = _race(live_server, merchant, [body] * 8, headers={"X-Idempotency-Key": "race-key"})
    assert [status for status, _ in results] == [200] * 8
    assert len({answer["refundId"] for _, answer in results}) == 1
    assert Refund.objects.filter(payment=payment).count() == 1
