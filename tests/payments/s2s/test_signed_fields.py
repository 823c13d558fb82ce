"""Signed means signed on creation too (issue 29, finding 2): the full base strings sign where
a payment's data goes (S2S webhookUrl, hosted returnUrl and tokenId); the interface's base
string, which leaves them out, is still accepted (SDK 1.0.1 sends webhookUrl with it), and its
checksum is used once where a payment would be created."""
from __future__ import annotations

import json
import socket

from gateway.core.signing import compute_checksum
from payments.models import Payment
from tests.payments.s2s.conftest import URL, assert_error
from tests.support.factories import now, session_body, signed_body

PUBLIC = "http://93.184.215.14/orders/hook"   # public addresses as literals: nothing resolves offline here
OTHER = "http://93.184.215.15/collect"


def full_s2s(tm, **fields) -> dict:
    body = signed_body(tm, **fields)
    body["checksum"] = compute_checksum(tm.secret_key, body["merchantId"], body["merchantTxnId"], body["amount"],
                                        body["currency"], body.get("webhookUrl", ""), body["timestamp"])
    return body


def test_the_full_s2s_base_string_signs_the_webhook_url(s2s_merchant, post):
    body = full_s2s(s2s_merchant, webhookUrl=PUBLIC)
    assert_error(post(s2s_merchant, {**body, "webhookUrl": OTHER}), "INVALID_SIGNATURE")
    assert_error(post(s2s_merchant, {k: v for k, v in body.items() if k != "webhookUrl"}), "INVALID_SIGNATURE")
    assert post(s2s_merchant, body).status_code == 201
    assert Payment.objects.get().webhook_url == PUBLIC


def test_the_interface_base_string_still_works_and_its_checksum_moves_nothing_twice(s2s_merchant, post):
    # The acquirer refuses to start this amount (the sandbox's SERVICE_UNAVAILABLE): nothing is
    # written, so merchantTxnId is free, and only the replay store stands between a captured
    # request and a payment whose webhooks go elsewhere.
    body = signed_body(s2s_merchant, amount=100002, webhookUrl=PUBLIC)
    assert_error(post(s2s_merchant, body), "SERVICE_UNAVAILABLE")
    assert_error(post(s2s_merchant, {**body, "webhookUrl": OTHER}), "INVALID_SIGNATURE")
    assert_error(post(s2s_merchant, body), "SERVICE_UNAVAILABLE")  # the same request again goes on
    assert Payment.objects.count() == 0
    created = signed_body(s2s_merchant, webhookUrl=PUBLIC)
    assert post(s2s_merchant, created).status_code == 201
    assert_error(post(s2s_merchant, {**created, "webhookUrl": OTHER}), "DUPLICATE_TRANSACTION")


def test_a_retry_with_the_same_key_and_another_body_is_still_idempotency_mismatch(s2s_merchant, post):
    body = signed_body(s2s_merchant, webhookUrl=PUBLIC)
    assert post(s2s_merchant, body, key="k").status_code == 201
    assert_error(post(s2s_merchant, {**body, "webhookUrl": OTHER}, key="k"), "IDEMPOTENCY_MISMATCH")


def test_without_redis_payment_creation_goes_on(s2s_merchant, post, settings):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {"default": {"BACKEND": "gateway.perf.cache.RedisCache", "LOCATION": f"redis://127.0.0.1:{port}/0"}}
    assert post(s2s_merchant, signed_body(s2s_merchant)).status_code == 201


def test_the_full_hosted_base_string_signs_the_return_url(api, s2s_merchant):
    tm = s2s_merchant

    def create(body):
        return api.post("/api/v2/payments", json.dumps(body), content_type="application/json", **tm.headers)

    body = session_body(tm, timestamp=now())
    body["checksum"] = compute_checksum(tm.secret_key, tm.code, body["merchantTxnId"], body["amount"], "INR",
                                        body["returnUrl"], "", body["timestamp"])
    assert_error(create({**body, "returnUrl": "https://elsewhere.example/return"}), "INVALID_SIGNATURE")
    assert create(body).status_code == 200
    # The interface's base string: accepted; its checksum with another returnUrl is refused as
    # used, the same request again is the merchantTxnId's to answer.
    plain = session_body(tm)
    assert create(plain).status_code == 200
    assert_error(create({**plain, "returnUrl": "https://elsewhere.example/return"}), "INVALID_SIGNATURE")
    assert_error(create(plain), "DUPLICATE_TRANSACTION")
