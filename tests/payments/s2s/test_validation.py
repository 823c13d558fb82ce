"""Every field and limit of the S2S request at its boundary and one past it, and every error
code of POST /api/v2/payments/s2s before the payment is created."""
from __future__ import annotations

import json

import pytest

from payments.models import Payment
from tests.payments.s2s.conftest import assert_error
from tests.support.factories import make_merchant, now, signed_body


def email_of_length(n: int) -> str:
    local = "a" * 64
    labels, remaining = [], n - len(local) - 1 - len(".com")
    while remaining > 0:
        size = min(63, remaining)
        if remaining - size == 1:  # never leave a lone dot
            size -= 1
        labels.append("b" * size)
        remaining -= size + 1
    address = f"{local}@{'.'.join(labels)}.com"
    assert len(address) == n
    return address


OK, BAD = 201, 400

BOUNDARIES = [
    ("amount", 99, BAD), ("amount", 100, OK), ("amount", 100_000_000, OK), ("amount", 100_000_001, BAD),
    ("merchantTxnId", "T" * 100, OK), ("merchantTxnId", "T" * 101, BAD),
    ("merchantTxnId", "ORD 1", BAD), ("merchantTxnId", "ORD#1", BAD), ("merchantTxnId", "ORD/1", BAD),
    ("merchantTxnId", "ऑर्डर1", BAD), ("merchantTxnId", "", BAD), ("merchantTxnId", "Ab_9-z", OK),
    ("customerName", "A", BAD), ("customerName", "Al", OK), ("customerName", "N" * 100, OK),
    ("customerName", "N" * 101, BAD), ("customerName", "  ", BAD), ("customerName", "Asha\x00Rao", BAD),
    ("customerEmail", email_of_length(255), OK), ("customerEmail", email_of_length(256), BAD),
    ("customerEmail", "not-an-email", BAD), ("customerEmail", "a@b", BAD), ("customerEmail", "a b@example.com", BAD),
    ("customerPhone", "9" * 20, OK), ("customerPhone", "9" * 21, BAD), ("customerPhone", "+91 (22) 1234-5678", OK),
    ("customerPhone", "call me", BAD), ("customerPhone", "", BAD),
    ("description", "d" * 500, OK), ("description", "d" * 501, BAD), ("description", "two\nlines", OK),
    ("udf1", "u" * 255, OK), ("udf1", "u" * 256, BAD), ("udf20", "u" * 255, OK), ("udf20", "u" * 256, BAD),
    ("udf7", 7, BAD),
    ("metadata", {f"k{i}": i for i in range(50)}, OK), ("metadata", {f"k{i}": i for i in range(51)}, BAD),
    ("metadata", {"k" * 40: "v" * 500}, OK), ("metadata", {"k" * 41: "v"}, BAD), ("metadata", {"k": "v" * 501}, BAD),
    ("metadata", {"nested": {"a": 1}}, BAD), ("metadata", ["a"], BAD),
    ("upiExpiryMinutes", 0, BAD), ("upiExpiryMinutes", 1, OK), ("upiExpiryMinutes", 60, OK),
    ("upiExpiryMinutes", 61, BAD), ("upiExpiryMinutes", "5", BAD),
    ("currency", "INR", OK), ("currency", "USD", BAD), ("currency", "inr", BAD),
]


@pytest.mark.parametrize(("field", "value", "status"), BOUNDARIES,
                         ids=[f"{f}-{str(v)[:12]}-{len(v) if hasattr(v, '__len__') else v}-{s}"
                              for f, v, s in BOUNDARIES])
def test_each_limit_at_its_boundary_and_one_past_it(s2s_merchant, post, field, value, status):
    response = post(s2s_merchant, signed_body(s2s_merchant, **{field: value}))
    if status == OK:
        assert response.status_code == 201, response.json()
        assert response.json()["success"] is True
    else:
        assert_error(response, "VALIDATION_ERROR", field=field.split(".")[0])
        assert not Payment.objects.exists()


def test_merchant_id_of_50_characters_is_accepted_and_51_is_a_validation_error(db, post):
    tm = make_merchant(code="M" * 50)
    assert post(tm, signed_body(tm)).status_code == 201
    assert_error(post(tm, signed_body(tm, merchantId="M" * 51)), "VALIDATION_ERROR", field="merchantId")


@pytest.mark.parametrize("checksum", ["a" * 63, "a" * 65, "g" * 64, "", 12345])
def test_checksum_that_is_not_64_hex_characters_is_a_validation_error(s2s_merchant, post, checksum):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, checksum=checksum)), "VALIDATION_ERROR",
                 field="checksum")


def test_checksum_in_uppercase_hex_is_invalid_signature(s2s_merchant, post):
    body = signed_body(s2s_merchant)
    body["checksum"] = body["checksum"].upper()
    assert_error(post(s2s_merchant, body), "INVALID_SIGNATURE")


REQUIRED = ["merchantId", "merchantTxnId", "amount", "currency", "customerName", "customerEmail",
            "customerPhone", "paymentMode", "checksum"]


@pytest.mark.parametrize("field", REQUIRED)
def test_each_required_field_missing_is_a_validation_error_naming_it(s2s_merchant, post, field):
    body = assert_error(post(s2s_merchant, signed_body(s2s_merchant, **{field: ...})), "VALIDATION_ERROR",
                        field=field)
    assert "required" in body["errorMessage"]


@pytest.mark.parametrize(("field", "value"), [
    ("amount", "12345"), ("amount", 123.45), ("amount", True), ("merchantId", 42), ("customerName", ["A", "B"]),
    ("customerPhone", 9876543210), ("paymentMode", 1), ("amount", None), ("description", 5),
])
def test_a_wrong_json_type_is_a_validation_error_naming_the_field(s2s_merchant, post, field, value):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, **{field: value})), "VALIDATION_ERROR", field=field)


def test_the_first_failing_field_in_the_interfaces_order_is_the_one_named(s2s_merchant, post):
    body = signed_body(s2s_merchant, amount=1, customerEmail="nope", paymentMode="CARD")
    assert_error(post(s2s_merchant, body), "VALIDATION_ERROR", field="amount")


def test_optional_fields_may_be_null(s2s_merchant, post):
    body = signed_body(s2s_merchant, description=None, upiExpiryMinutes=None, metadata=None, udf3=None)
    assert post(s2s_merchant, body).status_code == 201


@pytest.mark.parametrize(("raw", "content_type", "field"), [
    (b"{not json", "application/json", "body"),
    (b"[1, 2]", "application/json", "body"),
    (b'"text"', "application/json", "body"),
    (b"merchantId=ACME", "application/x-www-form-urlencoded", "Content-Type"),
    (b"{}", "text/plain", "Content-Type"),
])
def test_a_body_that_is_not_a_json_object_is_a_validation_error(s2s_merchant, post, raw, content_type, field):
    assert_error(post(s2s_merchant, None, raw=raw, headers={"CONTENT_TYPE": content_type}),
                 "VALIDATION_ERROR", field=field)


def test_an_oversized_body_is_a_validation_error_naming_the_body(s2s_merchant, post, settings):
    body = signed_body(s2s_merchant, description="x" * 70_000)
    assert_error(post(s2s_merchant, body), "VALIDATION_ERROR", field="body")


# --- the other codes, before anything is created --------------------------------------------

@pytest.mark.parametrize("mode", ["UPI", "CARD", "upi_qr", "UPI_COLLECT", ""])
def test_a_payment_mode_other_than_upi_qr_or_upi_intent_is_invalid_payment_mode(s2s_merchant, post, mode):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, paymentMode=mode)), "INVALID_PAYMENT_MODE")


def test_a_merchant_without_s2s_gets_s2s_not_enabled(db, post):
    tm = make_merchant(s2s=False)
    assert_error(post(tm, signed_body(tm)), "S2S_NOT_ENABLED", status=403)


def test_s2s_not_enabled_comes_before_looking_at_the_body(db, post):
    tm = make_merchant(s2s=False)
    assert_error(post(tm, None, raw=b"{broken"), "S2S_NOT_ENABLED", status=403)


def test_a_wrong_api_key_is_unauthorized(s2s_merchant, post):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant), headers={"HTTP_X_API_KEY": "gwk_wrong" + "x" * 30}),
                 "UNAUTHORIZED", status=401)


def test_a_missing_api_key_is_unauthorized(s2s_merchant, api):
    response = api.post("/api/v2/payments/s2s", signed_body(s2s_merchant), format="json",
                        HTTP_X_MERCHANT_ID=s2s_merchant.code)
    assert_error(response, "UNAUTHORIZED", status=401)


def test_a_missing_merchant_header_is_unauthorized(s2s_merchant, api):
    response = api.post("/api/v2/payments/s2s", signed_body(s2s_merchant), format="json",
                        HTTP_X_API_KEY=s2s_merchant.api_key)
    assert_error(response, "UNAUTHORIZED", status=401)


def test_a_merchant_header_of_another_merchant_is_unauthorized(s2s_merchant, post):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant), headers={"HTTP_X_MERCHANT_ID": "OTHER"}),
                 "UNAUTHORIZED", status=401)


def test_a_body_merchant_id_of_another_merchant_is_unauthorized(s2s_merchant, other_merchant, post):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, merchantId=other_merchant.code)),
                 "UNAUTHORIZED", status=401)
    assert not Payment.objects.exists()


def test_a_missing_timestamp_is_invalid_timestamp(s2s_merchant, post):
    body = signed_body(s2s_merchant, timestamp=...)
    assert_error(post(s2s_merchant, body), "INVALID_TIMESTAMP")


@pytest.mark.parametrize("timestamp", [lambda: now() + 3600, lambda: "soon", lambda: 1.5, lambda: True])
def test_a_future_or_malformed_timestamp_is_invalid_timestamp(s2s_merchant, post, timestamp):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, timestamp=timestamp())), "INVALID_TIMESTAMP")


def test_a_timestamp_older_than_five_minutes_is_request_expired(s2s_merchant, post):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, timestamp=now() - 301)), "REQUEST_EXPIRED")


def test_a_timestamp_just_inside_five_minutes_is_accepted(s2s_merchant, post):
    assert post(s2s_merchant, signed_body(s2s_merchant, timestamp=now() - 290)).status_code == 201


def test_a_checksum_over_other_values_is_invalid_signature(s2s_merchant, post):
    body = signed_body(s2s_merchant)
    body["amount"] += 1  # the checksum was computed over the old amount
    assert_error(post(s2s_merchant, body), "INVALID_SIGNATURE")


def test_a_checksum_with_another_secret_is_invalid_signature(s2s_merchant, other_merchant, post):
    body = signed_body(s2s_merchant)
    body["checksum"] = other_merchant.checksum(body["merchantId"], body["merchantTxnId"], body["amount"],
                                               body["currency"], body["timestamp"])
    assert_error(post(s2s_merchant, body), "INVALID_SIGNATURE")


def test_the_checksum_covers_the_timestamp(s2s_merchant, post):
    body = signed_body(s2s_merchant)
    body["timestamp"] -= 1
    assert_error(post(s2s_merchant, body), "INVALID_SIGNATURE")


def test_get_is_method_not_allowed_in_the_envelope(s2s_merchant, api):
    response = api.get("/api/v2/payments/s2s", **s2s_merchant.headers)
    assert_error(response, "METHOD_NOT_ALLOWED", status=405)


@pytest.mark.parametrize("key", ["", "a" * 256, "has space", "naïve"])
def test_a_malformed_idempotency_key_is_a_validation_error_naming_the_header(s2s_merchant, post, key):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant), key=key), "VALIDATION_ERROR",
                 field="X-Idempotency-Key")


@pytest.mark.parametrize(("extra", "field"), [
    ('"customerName": "\\ud800ab"', "customerName"),
    ('"udf1": "\\udfff"', "udf1"),
    ('"metadata": {"k": "\\ud800"}', "metadata"),
    ('"metadata": {"\\ud800": 1}', "metadata"),
    ('"metadata": {"big": 1e400}', "metadata"),
])
def test_values_no_database_can_store_are_validation_errors_not_500s(s2s_merchant, post, extra, field):
    raw = json.dumps(signed_body(s2s_merchant))[:-1] + ", " + extra + "}"
    assert_error(post(s2s_merchant, None, raw=raw.encode(), key="k"), "VALIDATION_ERROR", field=field)
    assert not Payment.objects.exists()


def test_an_unknown_field_carrying_a_lone_surrogate_is_ignored(s2s_merchant, post):
    raw = json.dumps(signed_body(s2s_merchant))[:-1] + ', "note": "\\ud800"}'
    assert post(s2s_merchant, None, raw=raw.encode(), key="k").status_code == 201
