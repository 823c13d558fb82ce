"""Duplicates never leave orphan orders (issue 28): two S2S creations with one merchantTxnId at
the same moment open one order at Cashfree between them, and every order Cashfree holds is a
payment of ours. Cashfree is the stateful double (tests/acquirer_cashfree/double.py).

The first request is held inside its acquirer call until the second has answered, so the two
overlap exactly where the old code raced (both asked "is it taken?" before either inserted)."""
from __future__ import annotations

import json
import threading

import pytest
from django.db import connection
from django.test import Client

from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
from payments.models import MerchantTxnClaim, Payment
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.payments.s2s.conftest import URL
from tests.support.factories import make_merchant, signed_body

pytestmark = pytest.mark.django_db(transaction=True)


def _post(tm, body, key=None):
    headers = dict(tm.headers)
    if key is not None:
        headers["HTTP_X_IDEMPOTENCY_KEY"] = key
    try:
        return Client().post(URL, json.dumps(body), content_type="application/json", **headers)
    finally:
        connection.close()  # this thread's own connection


def _overlapping(monkeypatch, first, second):
    """Run `first()` in a thread, held inside its acquirer call until `second()` (run here) has
    answered; returns both responses."""
    register = CashfreeAcquirer.upi_register
    second_done = threading.Event()
    calls = []

    def held_register(self, *, payment):
        calls.append(payment.sabpaisa_txn_id)
        if len(calls) == 1:
            second_done.wait(timeout=20)  # a bound only a hung build reaches, not a timing
        return register(self, payment=payment)

    monkeypatch.setattr(CashfreeAcquirer, "upi_register", held_register)
    answers = {}
    thread = threading.Thread(target=lambda: answers.update(first=first()))
    thread.start()
    while not calls and thread.is_alive():
        thread.join(0.01)  # until the first request is inside its acquirer call
    answers["second"] = second()
    second_done.set()
    thread.join()
    return answers["first"], answers["second"], calls


@pytest.mark.parametrize("keys", [(None, None), ("k-one", "k-two")], ids=["no key", "two keys"])
def test_two_creations_with_one_merchant_txn_id_open_one_order_at_cashfree(cashfree_double, monkeypatch, keys):
    tm = make_merchant(name="Race Tea")
    body = signed_body(tm)
    first, second, calls = _overlapping(monkeypatch, lambda: _post(tm, body, keys[0]),
                                        lambda: _post(tm, body, keys[1]))
    assert first.status_code == 201, first.json()
    assert second.json()["errorCode"] == "DUPLICATE_TRANSACTION"
    assert len(calls) == 1
    payment = Payment.objects.get()
    assert list(cashfree_double.orders) == [payment.sabpaisa_txn_id]


def test_a_key_taken_over_mid_call_does_not_call_cashfree_again(cashfree_double, monkeypatch):
    """The key's lease ran out while Cashfree answered slowly and the merchant's retry took the
    key over: the retry is told to come back (SERVICE_UNAVAILABLE) instead of opening a second
    order; the next retry gets the payment the first call made."""
    from datetime import timedelta

    from django.utils import timezone

    from payments.models import IdempotencyRecord

    tm = make_merchant(name="Lease Race Tea")
    body = signed_body(tm)

    def retry_after_the_lease():
        IdempotencyRecord.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
        return _post(tm, body, "k-same")

    first, second, calls = _overlapping(monkeypatch, lambda: _post(tm, body, "k-same"), retry_after_the_lease)
    assert second.json()["errorCode"] == "SERVICE_UNAVAILABLE"
    assert len(calls) == 1
    if first.status_code != 201:  # its lease was gone: it wrote nothing and kept the claim's ids
        again = _post(tm, signed_body(tm, merchantTxnId=body["merchantTxnId"], timestamp=body["timestamp"] - 1), "k-same")  # signed afresh
        assert again.status_code == 201, again.json()
    payment = Payment.objects.get()
    assert list(cashfree_double.orders) == [payment.sabpaisa_txn_id]


def test_no_answer_from_cashfree_keeps_the_ids_so_the_retry_finds_the_same_order(cashfree_double):
    tm = make_merchant(name="Unknown Tea")
    body = signed_body(tm)
    cashfree_double.unavailable = True
    assert _post(tm, body).json()["errorCode"] == "SERVICE_UNAVAILABLE"
    claim = MerchantTxnClaim.objects.get()
    cashfree_double.unavailable = False
    response = _post(tm, signed_body(tm, merchantTxnId=body["merchantTxnId"], timestamp=body["timestamp"] - 1))
    assert response.status_code == 201, response.json()
    assert response.json()["txnId"] == claim.sabpaisa_txn_id
    assert list(cashfree_double.orders) == [claim.sabpaisa_txn_id]


def test_a_refused_start_frees_the_merchant_txn_id_for_a_fresh_start(cashfree_double):
    tm = make_merchant(name="Refused Race Tea")
    body = signed_body(tm, customerPhone="12345")  # Cashfree takes no such phone: refused before any call
    first = _post(tm, body)
    assert first.status_code == 400 and first.json()["errorCode"] in {"PAYMENT_FAILED", "VALIDATION_ERROR"}
    assert not MerchantTxnClaim.objects.exists()
    response = _post(tm, signed_body(tm, merchantTxnId=body["merchantTxnId"], timestamp=body["timestamp"] - 1))
    assert response.status_code == 201, response.json()
