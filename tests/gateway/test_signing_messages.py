"""INVALID_SIGNATURE teaches (issue 26): the base-string recipe with the fields in order, the
base string of the request as received, "lowercase hex", what is wrong with the form of the
checksum sent; never the secret key or the checksum the service expected. A timestamp in
milliseconds is called that."""
from __future__ import annotations

import time

import pytest

from gateway.core.signing import checksum_help, compute_checksum
from tests.support.factories import make_success_payment, refund_body, session_body, signed_body

pytestmark = pytest.mark.django_db

CREATION_RECIPE = "merchantId|merchantTxnId|amount|currency|timestamp"


def error(response) -> tuple[str, str]:
    body = response.json()
    return body["errorCode"], body["errorMessage"]


def assert_teaches(message: str, *, recipe: str, base: str, secret: str, expected: str) -> None:
    assert message.startswith("checksum verification failed.")
    assert f"base string {recipe}:" in message
    assert f'The base string of this request is "{base}"' in message
    assert "64 lowercase hex characters" in message and "Unix seconds" in message and "paise" in message
    assert secret not in message and expected not in message


def test_a_hosted_session_signed_with_the_wrong_key_is_told_the_recipe_and_its_base_string(api, merchant):
    body = session_body(merchant, checksum=compute_checksum("gws_not-the-key", "x"))
    code, message = error(api.post("/api/v2/payments", body, format="json", **merchant.headers))
    base = f"{merchant.code}|{body['merchantTxnId']}|149900|INR|{body['timestamp']}"
    assert code == "INVALID_SIGNATURE"
    assert_teaches(message, recipe=CREATION_RECIPE, base=base, secret=merchant.secret_key,
                   expected=compute_checksum(merchant.secret_key, base))


def test_an_s2s_payment_with_uppercase_hex_is_told_to_write_it_in_lowercase(api, merchant):
    body = signed_body(merchant)
    body["checksum"] = body["checksum"].upper()
    code, message = error(api.post("/api/v2/payments/s2s", body, format="json", **merchant.headers))
    assert code == "INVALID_SIGNATURE"
    assert "uppercase letters: write the hex in lowercase" in message
    assert f"base string {CREATION_RECIPE}:" in message
    assert body["checksum"].lower() not in message


def test_a_checksum_of_the_wrong_form_is_told_its_length_and_that_hex_is_wanted():
    # The API's serializers refuse a checksum that is not 64 hex characters (VALIDATION_ERROR)
    # before it is compared; the comparison still says so to any caller that reaches it.
    message = checksum_help("dGhpcyBpcyBub3QgaGV4IGF0IGFsbCwgaXQgaXMgYmFzZTY0IQ==", None, ())
    assert "is 52 characters long and must be 64 characters of 0-9 and a-f (hex, not base64)" in message


@pytest.mark.parametrize("path", ["/api/v2/payments", "/api/v2/payments/s2s"])
def test_a_timestamp_in_milliseconds_is_called_milliseconds(api, merchant, path):
    millis = int(time.time() * 1000)
    make = session_body if path.endswith("payments") else signed_body
    code, message = error(api.post(path, make(merchant, timestamp=millis), format="json", **merchant.headers))
    assert code == "INVALID_TIMESTAMP"
    assert f"timestamp {millis} looks like milliseconds: send Unix seconds (here {millis // 1000})" in message


def test_a_timestamp_far_in_the_future_but_not_milliseconds_says_how_far(api, merchant):
    ahead = int(time.time()) + 3600
    code, message = error(api.post("/api/v2/payments", session_body(merchant, timestamp=ahead), format="json",
                                   **merchant.headers))
    assert code == "INVALID_TIMESTAMP"
    assert "is in the future" in message and "milliseconds" not in message


def test_a_signed_refund_names_its_own_recipe(api, merchant):
    payment = make_success_payment(merchant.merchant, amount=50_000)
    body = refund_body(merchant, payment, sign=True, refundAmount=1000)
    body["checksum"] = compute_checksum(merchant.secret_key, "wrong")
    code, message = error(api.post("/api/v2/refunds", body, format="json", **merchant.headers))
    assert code == "INVALID_SIGNATURE"
    assert "base string merchantId|transactionId|refundId|timestamp:" in message
    assert f'"{merchant.code}|{payment.sabpaisa_txn_id}|{body["refundId"]}|{body["timestamp"]}"' in message


def test_a_signed_enquiry_never_shows_the_payments_amount(api, merchant):
    payment = make_success_payment(merchant.merchant, amount=73_219)
    now = int(time.time())
    body = {"clientCode": merchant.code, "merchantTxnId": payment.merchant_txn_id, "timestamp": now,
            "checksum": compute_checksum(merchant.secret_key, "wrong")}
    code, message = error(api.post("/api/v2/payments/enquiry", body, format="json", **merchant.headers))
    assert code == "INVALID_SIGNATURE"
    assert "base string merchantId|merchantTxnId|0|INR|timestamp:" in message
    assert f'"{merchant.code}|{payment.merchant_txn_id}|0|INR|{now}"' in message
    assert "73219" not in message


def test_a_missing_checksum_where_signing_is_required_gets_the_recipe(api, merchant):
    merchant.merchant.signed_requests_required = True
    merchant.merchant.save(update_fields=["signed_requests_required"])
    code, message = error(api.get(f"/api/v2/refunds/RF0000000000?merchantId={merchant.code}&timestamp={int(time.time())}",
                                  **merchant.headers))
    assert code == "INVALID_SIGNATURE"
    assert message.startswith("checksum is required: this merchant requires signed requests.")
    assert "base string merchantId|refundId|timestamp:" in message
