"""Signed means signed (issue 29, finding 2): a refund's checksum is used once, and the full
base string signs the amount.

The review replayed one signed refund request without a refundId (the SDK 3.0.0's base string,
merchantId|transactionId|refundId|timestamp, which leaves the amount out) three times with
amounts 100, 50,000 and 49,900: all were answered 200 and the payment was refunded in full."""
from __future__ import annotations

import socket
import time

import pytest
import redis
from django.conf import settings as django_settings

from gateway.core.signing import compute_checksum
from refunds.models import Refund
from tests.support.factories import make_success_payment

pytestmark = pytest.mark.django_db


def sdk_signed(tm, payment, *, amount=None, refund_id="", ts=None) -> dict:
    """A refund body signed as the SDK 3.0.0 signs: the amount is not in the checksum."""
    ts = ts or int(time.time())
    body = {"merchantId": tm.code, "transactionId": payment.sabpaisa_txn_id, "timestamp": ts,
            "checksum": compute_checksum(tm.secret_key, tm.code, payment.sabpaisa_txn_id, refund_id, ts)}
    if refund_id:
        body["refundId"] = refund_id
    if amount is not None:
        body["amount"] = amount
    return body


def fully_signed(tm, payment, *, amount=None, refund_id="", ts=None) -> dict:
    """A refund body signed over merchantId|transactionId|refundId|amount|timestamp."""
    ts = ts or int(time.time())
    amount_part = "" if amount is None else amount
    body = {"merchantId": tm.code, "transactionId": payment.sabpaisa_txn_id, "timestamp": ts,
            "checksum": compute_checksum(tm.secret_key, tm.code, payment.sabpaisa_txn_id, refund_id, amount_part, ts)}
    if refund_id:
        body["refundId"] = refund_id
    if amount is not None:
        body["amount"] = amount
    return body


def refunded(payment) -> int:
    return sum(Refund.objects.filter(payment=payment).values_list("amount", flat=True))


def test_one_signed_refund_replayed_with_other_amounts_refunds_once(post_refund, merchant):
    payment = make_success_payment(merchant, amount=100_000)
    original = sdk_signed(merchant, payment, amount=100)
    assert post_refund(original).status_code == 200

    for amount in (100, 50_000, 49_900):
        replay = post_refund({**original, "amount": amount})
        assert replay.status_code == 400, replay.json()
        assert replay.json()["errorCode"] == "INVALID_SIGNATURE"
        assert "already used" in replay.json()["errorMessage"]
    assert refunded(payment) == 100 and Refund.objects.count() == 1


def test_the_full_base_string_signs_the_amount(post_refund, merchant):
    payment = make_success_payment(merchant, amount=100_000)
    signed = fully_signed(merchant, payment, amount=500)
    tampered = post_refund({**signed, "amount": 50_000})
    assert tampered.json()["errorCode"] == "INVALID_SIGNATURE"
    assert "already used" not in tampered.json()["errorMessage"]
    assert Refund.objects.count() == 0
    assert post_refund(signed).status_code == 200
    assert refunded(payment) == 500
    # Without an amount it signs "" for "the whole remaining amount", and is used once too.
    rest = fully_signed(merchant, payment)
    assert post_refund(rest).json()["refundAmount"] == 99_500
    assert post_refund(rest).json()["errorCode"] == "INVALID_SIGNATURE"


def test_the_same_request_again_with_its_refund_id_is_answered_with_the_first_refund(post_refund, merchant):
    payment = make_success_payment(merchant, amount=100_000)
    first = sdk_signed(merchant, payment, amount=700, refund_id="ORD9-R1")
    created = post_refund(first).json()
    again = post_refund(first)
    assert again.status_code == 200 and again.json()["refundId"] == "ORD9-R1"
    assert again.json()["createdAt"] == created["createdAt"]
    other_amount = post_refund({**first, "amount": 70_000})
    assert other_amount.json()["errorCode"] == "INVALID_SIGNATURE"
    assert refunded(payment) == 700


def test_the_same_request_again_with_its_idempotency_key_replays_and_another_key_is_refused(post_refund, merchant):
    payment = make_success_payment(merchant, amount=100_000)
    body = sdk_signed(merchant, payment, amount=300)
    first = post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "k-1"})
    again = post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "k-1"})
    assert again.status_code == 200 and again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    other_key = post_refund(body, headers={"HTTP_X_IDEMPOTENCY_KEY": "k-2"})
    assert other_key.json()["errorCode"] == "INVALID_SIGNATURE"
    assert post_refund(body).json()["errorCode"] == "INVALID_SIGNATURE"
    assert refunded(payment) == 300


def test_the_replay_store_is_redis_shared_by_every_node_for_as_long_as_the_timestamp_is_accepted(post_refund, merchant):
    payment = make_success_payment(merchant, amount=100_000)
    body = sdk_signed(merchant, payment, amount=100)
    assert post_refund(body).status_code == 200
    store = redis.Redis.from_url(django_settings.REDIS_URL)
    (key,) = store.keys(f"*replay:{merchant.merchant.pk}:{body['checksum']}")
    assert 0 < store.ttl(key) <= django_settings.REQUEST_MAX_AGE_SECONDS + 1


def test_without_redis_a_signed_refund_is_refused_and_nothing_is_written(post_refund, merchant, settings, caplog):
    payment = make_success_payment(merchant, amount=100_000)
    with socket.socket() as probe:  # a Redis nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {"default": {"BACKEND": "gateway.perf.cache.RedisCache", "LOCATION": f"redis://127.0.0.1:{port}/0"}}
    for body in (sdk_signed(merchant, payment, amount=100), fully_signed(merchant, payment, amount=100)):
        refused = post_refund(body)
        assert refused.status_code == 400 and refused.json()["errorCode"] == "SERVICE_UNAVAILABLE"
    assert Refund.objects.count() == 0
    assert any("cannot be checked for a replay" in r.getMessage() for r in caplog.records)
    # An unsigned refund has no checksum to replay (the merchant's "signed requests required" decides).
    assert post_refund({"merchantId": merchant.code, "sabpaisaTxnId": payment.sabpaisa_txn_id,
                        "refundAmount": 100}).status_code == 200
