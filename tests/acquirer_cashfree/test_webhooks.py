"""Cashfree's inbound webhooks: signature over timestamp + raw body, and a freshness window."""
from __future__ import annotations

import hmac
from decimal import Decimal

import pytest

from payments.acquirer.cashfree import notices as webhooks
from payments.acquirer.cashfree.notices import (
    MAX_AGE_SECONDS,
    MAX_AHEAD_SECONDS,
    WebhookVerificationError,
    verify_webhook,
    webhook_signature,
)

SECRET = "cfsk_ma_test_0123456789abcdef"
TIMESTAMP = "1617695238078"  # Cashfree's example: epoch milliseconds
SENT_AT = 1617695238.078
BODY = (b'{"data":{"order":{"order_id":"pay_0001","order_amount":100.50}},'
        b'"type":"PAYMENT_SUCCESS_WEBHOOK"}')
# Computed outside Python: printf '%s' "$TIMESTAMP$BODY" | openssl dgst -sha256 -hmac "$SECRET" -binary | base64
SIGNATURE = "F5C1uszreGppizqrGK98wxTZm64Aomk98FEE7j6fzXw="


def headers(signature=SIGNATURE, timestamp=TIMESTAMP):
    return {"x-webhook-signature": signature, "x-webhook-timestamp": timestamp}


def test_signature_is_base64_hmac_sha256_of_timestamp_and_raw_body():
    assert webhook_signature(secret=SECRET, timestamp=TIMESTAMP, raw_body=BODY) == SIGNATURE


def test_a_genuine_delivery_is_accepted_with_amounts_as_decimals():
    payload = verify_webhook(secret=SECRET, headers=headers(), raw_body=BODY, now=SENT_AT + 1)
    assert payload["type"] == "PAYMENT_SUCCESS_WEBHOOK"
    assert payload["data"]["order"]["order_amount"] == Decimal("100.50")


def test_header_names_are_matched_whatever_their_case():
    mixed = {"X-Webhook-Signature": SIGNATURE, "X-WEBHOOK-TIMESTAMP": TIMESTAMP}
    assert verify_webhook(secret=SECRET, headers=mixed, raw_body=BODY, now=SENT_AT)


@pytest.mark.parametrize("body", [
    BODY.replace(b"100.50", b"100.5"),    # the same JSON, re-serialised: not the signed bytes
    BODY.replace(b"pay_0001", b"pay_0002"),
    BODY + b"\n",
])
def test_a_body_other_than_the_signed_bytes_is_refused(body):
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify_webhook(secret=SECRET, headers=headers(), raw_body=body, now=SENT_AT)


def test_a_delivery_signed_with_another_secret_is_refused():
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify_webhook(secret=SECRET + "x", headers=headers(), raw_body=BODY, now=SENT_AT)


def test_a_signature_moved_to_another_timestamp_is_refused():
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify_webhook(secret=SECRET, headers=headers(timestamp="1617695238079"), raw_body=BODY,
                       now=SENT_AT)


@pytest.mark.parametrize("missing", ["x-webhook-signature", "x-webhook-timestamp"])
def test_a_missing_header_is_named(missing):
    partial = {k: v for k, v in headers().items() if k != missing}
    with pytest.raises(WebhookVerificationError, match=missing):
        verify_webhook(secret=SECRET, headers=partial, raw_body=BODY, now=SENT_AT)


@pytest.mark.parametrize("timestamp", ["1617695238.078", "-1617695238078", "2021-04-06T07:47:18Z",
                                       "１６１７６９５２３８０７８", "99999999999999999999"])
def test_a_timestamp_that_is_not_epoch_milliseconds_is_refused(timestamp):
    with pytest.raises(WebhookVerificationError, match="milliseconds"):
        verify_webhook(secret=SECRET, headers=headers(timestamp=timestamp), raw_body=BODY, now=SENT_AT)


def test_the_oldest_and_newest_accepted_timestamps():
    assert verify_webhook(secret=SECRET, headers=headers(), raw_body=BODY,
                          now=SENT_AT + MAX_AGE_SECONDS)
    assert verify_webhook(secret=SECRET, headers=headers(), raw_body=BODY,
                          now=SENT_AT - MAX_AHEAD_SECONDS)


def test_a_stale_delivery_is_refused_even_with_a_good_signature():
    with pytest.raises(WebhookVerificationError, match="old"):
        verify_webhook(secret=SECRET, headers=headers(), raw_body=BODY,
                       now=SENT_AT + MAX_AGE_SECONDS + 0.001)


def test_a_delivery_from_the_future_is_refused():
    with pytest.raises(WebhookVerificationError, match="ahead"):
        verify_webhook(secret=SECRET, headers=headers(), raw_body=BODY,
                       now=SENT_AT - MAX_AHEAD_SECONDS - 0.001)


def test_a_timestamp_in_seconds_reads_as_1970_and_is_refused():
    timestamp = "1617695238"
    signature = webhook_signature(secret=SECRET, timestamp=timestamp, raw_body=BODY)
    with pytest.raises(WebhookVerificationError, match="old"):
        verify_webhook(secret=SECRET, headers=headers(signature, timestamp), raw_body=BODY, now=SENT_AT)


def test_signatures_are_compared_in_constant_time(monkeypatch):
    compared = []
    original = hmac.compare_digest

    def compare_digest(a, b):
        compared.append((a, b))
        return original(a, b)

    monkeypatch.setattr(webhooks.hmac, "compare_digest", compare_digest)
    verify_webhook(secret=SECRET, headers=headers(), raw_body=BODY, now=SENT_AT)
    assert compared == [(SIGNATURE.encode(), SIGNATURE.encode())]


def test_no_secret_configured_refuses_everything():
    with pytest.raises(WebhookVerificationError, match="secret"):
        verify_webhook(secret="", headers=headers(), raw_body=BODY, now=SENT_AT)


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]"])
def test_a_signed_body_that_is_not_a_json_object_is_refused(body):
    timestamp = TIMESTAMP
    signature = webhook_signature(secret=SECRET, timestamp=timestamp, raw_body=body)
    with pytest.raises(WebhookVerificationError, match="JSON"):
        verify_webhook(secret=SECRET, headers=headers(signature, timestamp), raw_body=body, now=SENT_AT)


def test_a_non_ascii_signature_header_is_refused_not_a_crash():
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify_webhook(secret=SECRET, headers=headers(signature="é" * 44), raw_body=BODY, now=SENT_AT)
