"""POST /api/v2/payments: every field and constraint, signatures, duplicates, the response."""
from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta

import pytest

from payments.models import Payment, PaymentEvent
from tests.payments.hosted.conftest import URL
from tests.support.factories import make_merchant, now, session_body

pytestmark = pytest.mark.django_db


def post(api, tm, body, **headers):
    headers.setdefault("HTTP_X_API_KEY", tm.api_key)
    return api.post(URL, body, format="json", **headers)


def assert_error(response, status, code, field=None):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["success"] is False and body["errorCode"] == code, body
    assert body["traceId"]
    if field:
        assert body["errorMessage"].startswith(field), body
    return body


def test_valid_request_opens_a_pending_session_and_answers_the_interface_fields_and_sabpaisas(api, shop, settings):
    settings.GATEWAY_PUBLIC_URL = "https://pay.example.in"
    body = session_body(shop, udf1="cart-7", udf20="z", metadata={"orderRef": "A1", "gift": True})
    before = datetime.now().astimezone()
    response = post(api, shop, body)

    assert response.status_code == 200, response.content
    data = response.json()
    # The interface's six fields, and beside them what SabPaisa's clients read (issue 17).
    assert set(data) == {"status", "sabpaisaTxnId", "paymentId", "checkoutUrl", "clientSecret", "expiresAt",
                         "success", "merchantTxnId", "amount", "currency", "message", "traceId"}
    payment = Payment.objects.get(payment_id=data["paymentId"])
    assert data["success"] is True and data["traceId"] == response["X-Trace-Id"] and data["message"]
    assert (data["merchantTxnId"], data["amount"], data["currency"]) == (body["merchantTxnId"], 149900, "INR")
    assert data["status"] == "PENDING" == payment.status
    assert data["sabpaisaTxnId"] == payment.sabpaisa_txn_id
    assert data["checkoutUrl"] == f"https://pay.example.in/checkout/{payment.payment_id}"
    assert "?" not in data["checkoutUrl"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{40,}", data["clientSecret"])
    assert payment.client_secret_hash == hashlib.sha256(data["clientSecret"].encode()).hexdigest()
    assert data["clientSecret"] not in str(Payment.objects.filter(pk=payment.pk).values().first())
    expires = datetime.fromisoformat(data["expiresAt"].replace("Z", "+00:00"))
    assert data["expiresAt"].endswith("Z")
    assert expires == payment.expires_at.replace(microsecond=0)
    ttl = settings.CHECKOUT_SESSION_TTL_SECONDS
    assert before + timedelta(seconds=ttl - 2) <= expires <= datetime.now().astimezone() + timedelta(seconds=ttl)

    assert payment.flow == Payment.Flow.HOSTED and payment.amount == 149900 and payment.currency == "INR"
    assert payment.return_url == body["returnUrl"]
    assert (payment.customer_name, payment.customer_email, payment.customer_phone) == (
        "Asha Rao", "asha@example.com", "9876543210")
    assert payment.udf == {"udf1": "cart-7", "udf20": "z"}
    assert payment.metadata == {"orderRef": "A1", "gift": True}
    assert payment.events.get().to_status == "PENDING"


def test_x_merchant_id_is_optional_but_must_match_when_sent(api, shop, other_merchant):
    assert post(api, shop, session_body(shop)).status_code == 200
    assert post(api, shop, session_body(shop), HTTP_X_MERCHANT_ID=shop.code).status_code == 200
    assert_error(post(api, shop, session_body(shop), HTTP_X_MERCHANT_ID=other_merchant.code), 401, "UNAUTHORIZED")


def test_missing_or_wrong_api_key_is_unauthorized(api, shop):
    assert_error(api.post(URL, session_body(shop), format="json"), 401, "UNAUTHORIZED")
    assert_error(post(api, shop, session_body(shop), HTTP_X_API_KEY="gwk_" + "x" * 32), 401, "UNAUTHORIZED")


def test_body_merchant_id_of_another_merchant_is_unauthorized(api, shop, other_merchant):
    body = session_body(shop, merchantId=other_merchant.code)
    assert_error(post(api, shop, body), 401, "UNAUTHORIZED")
    assert not Payment.objects.exists()


@pytest.mark.parametrize("field", ["merchantId", "merchantTxnId", "amount", "currency", "returnUrl", "checksum"])
def test_each_required_field_is_required(api, shop, field):
    body = session_body(shop, **{field: ...})
    assert_error(post(api, shop, body), 400, "VALIDATION_ERROR", field)


@pytest.mark.parametrize(("field", "value"), [
    ("merchantTxnId", "x" * 51),
    ("merchantTxnId", ""),
    ("merchantTxnId", 12345),
    ("merchantTxnId", "bad\nid"),
    ("amount", "149900"),
    ("amount", 1499.5),
    ("amount", True),
    ("amount", 99),
    ("amount", 0),
    ("amount", -100),
    ("amount", 100_000_001),
    ("currency", "USD"),
    ("returnUrl", "ftp://merchant.test/return"),
    ("returnUrl", "/relative/return"),
    ("returnUrl", "javascript:alert(1)"),
    ("returnUrl", "https://" + "a" * 2000 + ".in/"),
    ("customerName", "n" * 101),
    ("customerEmail", "not-an-email"),
    ("customerPhone", "987654321"),
    ("customerPhone", "98765432100"),
    ("customerPhone", "+919876543210"),
    ("customerPhone", 9876543210),
    ("description", "d" * 501),
    ("metadata", ["a", "b"]),
    ("metadata", "key=value"),
    ("metadata", {f"k{i}": i for i in range(51)}),
    ("metadata", {"k" * 41: 1}),
    ("metadata", {"nested": {"a": 1}}),
    ("metadata", {"long": "v" * 501}),
    ("udf1", "u" * 256),
    ("udf20", 7),
    ("udf2", "nul\x00byte"),
    ("description", "bell\x07"),
    ("metadata", {"k": "esc\x1b"}),
    ("checksum", "abc"),
    ("checksum", "g" * 64),
    ("checksum", 12345),
])
def test_a_value_violating_its_constraint_is_a_validation_error_naming_the_field(api, shop, field, value):
    body = session_body(shop, **{field: value})
    assert_error(post(api, shop, body), 400, "VALIDATION_ERROR", field)
    assert not Payment.objects.exists()


@pytest.mark.parametrize(("field", "value"), [
    ("amount", 100), ("amount", 100_000_000), ("merchantTxnId", "T" * 50), ("merchantTxnId", "TXNORD 1T1795272864"),
    ("customerEmail", ""), ("customerPhone", ""), ("customerName", ""), ("description", "d" * 500),
    ("metadata", {f"k{i}": "v" for i in range(50)}), ("udf5", "u" * 255), ("returnUrl", "http://localhost:8000/r?x=1"),
    ("description", "line one\nline two\ttabbed"), ("udf3", "a\r\nb"),
    ("customerEmail", ...), ("customerPhone", ...), ("description", ...), ("metadata", None),
])
def test_values_at_the_bounds_are_accepted(api, shop, field, value):
    assert post(api, shop, session_body(shop, **{field: value})).status_code == 200


def test_an_unknown_token_id_is_refused(api, shop):
    body = session_body(shop, tokenId="tok_123")
    error = assert_error(post(api, shop, body), 400, "VALIDATION_ERROR", "tokenId")
    assert "unknown token" in error["errorMessage"]


def test_wrong_checksum_is_invalid_signature(api, shop):
    assert_error(post(api, shop, session_body(shop, checksum="0" * 64)), 400, "INVALID_SIGNATURE")
    body = session_body(shop)
    body["amount"] += 1  # signed for another amount
    assert_error(post(api, shop, body), 400, "INVALID_SIGNATURE")


def test_checksum_in_upper_case_hex_is_invalid_signature(api, shop):
    # The interface says lowercase hex; docs/decisions.md compares exactly.
    body = session_body(shop)
    body["checksum"] = body["checksum"].upper()
    assert_error(post(api, shop, body), 400, "INVALID_SIGNATURE")


def test_checksum_with_another_merchants_secret_is_invalid_signature(api, shop, other_merchant):
    body = session_body(shop)
    body["checksum"] = other_merchant.checksum(shop.code, body["merchantTxnId"], body["amount"], "INR",
                                               body["timestamp"])
    assert_error(post(api, shop, body), 400, "INVALID_SIGNATURE")


def test_missing_or_future_timestamp_is_invalid_timestamp_and_old_is_request_expired(api, shop):
    assert_error(post(api, shop, session_body(shop, timestamp=...)), 400, "INVALID_TIMESTAMP")
    assert_error(post(api, shop, session_body(shop, timestamp=now() + 3600)), 400, "INVALID_TIMESTAMP")
    assert_error(post(api, shop, session_body(shop, timestamp=now() - 301)), 400, "REQUEST_EXPIRED")


def test_reused_merchant_txn_id_is_duplicate_transaction(api, shop):
    body = session_body(shop)
    assert post(api, shop, body).status_code == 200
    again = session_body(shop, merchantTxnId=body["merchantTxnId"])
    assert_error(post(api, shop, again), 400, "DUPLICATE_TRANSACTION")
    assert Payment.objects.count() == 1


def test_merchant_txn_id_of_an_s2s_payment_is_a_duplicate_too(api, shop):
    from django.utils import timezone

    Payment.objects.create(merchant=shop.merchant, flow=Payment.Flow.S2S, status="PROCESSING", amount=500,
                           merchant_txn_id="SHARED-1", s2s_mode="UPI_QR", expires_at=timezone.now())
    assert_error(post(api, shop, session_body(shop, merchantTxnId="SHARED-1")), 400, "DUPLICATE_TRANSACTION")


def test_the_same_merchant_txn_id_is_free_for_another_merchant(api, shop):
    other = make_merchant()
    assert post(api, shop, session_body(shop, merchantTxnId="ORDER-1")).status_code == 200
    assert post(api, other, session_body(other, merchantTxnId="ORDER-1")).status_code == 200


def test_a_body_that_is_not_a_json_object_is_a_validation_error(api, shop):
    assert_error(post(api, shop, ["not", "an", "object"]), 400, "VALIDATION_ERROR", "body")
    response = api.generic("POST", URL, b"{not json", content_type="application/json", HTTP_X_API_KEY=shop.api_key)
    assert_error(response, 400, "VALIDATION_ERROR", "body")


def test_path_with_a_doubled_leading_slash_works_as_the_sdk_may_send_it(api, shop):
    # The test client would read "//api/..." as a host name, so set the path as gunicorn passes it.
    response = api.post(URL, session_body(shop), format="json", HTTP_X_API_KEY=shop.api_key,
                        PATH_INFO="//api/v2/payments")
    assert response.status_code == 200


def test_creation_queues_nothing_and_the_sweep_expires_the_session_after_expires_at(
        api, shop, django_capture_on_commit_callbacks):
    from django.utils import timezone

    from payments.tasks import payments_expire_sweep

    with django_capture_on_commit_callbacks() as queued:
        data = post(api, shop, session_body(shop)).json()
    assert queued == []  # no message per session: the beat's sweep is the expiry (payments.services.expiry)
    payment = Payment.objects.get(payment_id=data["paymentId"])
    assert payments_expire_sweep() == 0
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert payments_expire_sweep() == 1
    payment.refresh_from_db()
    assert payment.status == "EXPIRED"


def test_unknown_fields_are_ignored(api, shop):
    assert post(api, shop, session_body(shop, somethingNew="x")).status_code == 200
    assert PaymentEvent.objects.count() == 1


def test_the_api_document_describes_creation_and_both_enquiry_forms():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {op["operationId"] for path in schema["paths"].values() for op in path.values()}
    assert {"hosted_payment_create", "payment_enquiry", "payment_enquiry_body"} <= operations
    request = schema["components"]["schemas"]["HostedPaymentRequestSchemaRequest"]["properties"]
    assert request["amount"]["type"] == "integer" and "udf20" in request and "timestamp" in request


@pytest.mark.parametrize("language", ["hi", "en", "ta-IN", "", None, "x" * 10])
def test_the_checkout_language_is_kept_as_sent(api, shop, language):
    response = api.post(URL, session_body(shop, language=language), format="json", HTTP_X_API_KEY=shop.api_key)
    assert response.status_code == 200, response.content
    assert Payment.objects.get(payment_id=response.json()["paymentId"]).language == (language or "")


@pytest.mark.parametrize("language", ["x" * 11, 7, ["hi"]])
def test_a_language_that_is_too_long_or_not_a_string_names_the_field(api, shop, language):
    response = api.post(URL, session_body(shop, language=language), format="json", HTTP_X_API_KEY=shop.api_key)
    assert_error(response, 400, "VALIDATION_ERROR", "language")
    assert not Payment.objects.exists()
