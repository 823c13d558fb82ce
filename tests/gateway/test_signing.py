"""The request checksum (with the README's known vector) and the timestamp rules."""
import re
import time
from pathlib import Path

import pytest
from django.test import override_settings

from gateway.core.errors import InvalidSignature, InvalidTimestamp, RequestExpired
from gateway.core.signing import compute_checksum, verify_checksum, verify_signed_request, verify_timestamp

README = Path(__file__).resolve().parents[2] / "README.md"

# The README's known vector: keep the two in step.
VECTOR_SECRET = "gws_4f1c2e9a7b3d5f60718293a4b5c6d7e8f9012345678"
VECTOR_FIELDS = ("DEMO", "ORDER-1001", 49900, "INR", 1767225600)
VECTOR_CHECKSUM = "75b93081097c657451a838186bce13c4a85f05f7db9cd976454a9551bae87ff7"

NOW = 1_800_000_000


def signed_body(merchant, *, timestamp=None, **overrides):
    """A valid body for the test view /t/signed, signed with `merchant`'s secret key."""
    body = {"merchantId": merchant.code, "merchantTxnId": "ORDER-1", "amount": 49900, "currency": "INR",
            "timestamp": int(time.time()) if timestamp is None else timestamp}
    body.update(overrides)
    body.setdefault("checksum", compute_checksum(
        merchant.secret_key, merchant.code, body["merchantTxnId"], body["amount"], body["currency"],
        body["timestamp"]))
    return body


# --- checksum --------------------------------------------------------------------------------

def test_checksum_matches_the_known_vector():
    assert compute_checksum(VECTOR_SECRET, *VECTOR_FIELDS) == VECTOR_CHECKSUM


def test_readme_states_the_known_vector_this_test_checks():
    text = README.read_text()
    assert VECTOR_SECRET in text
    assert VECTOR_CHECKSUM in text
    assert "DEMO|ORDER-1001|49900|INR|1767225600" in text.replace("\\|", "|")


def test_readme_python_snippet_computes_the_known_vector():
    """The copy-paste snippet in the README, run as written, gives the documented checksum."""
    text = README.read_text()
    snippet = re.search(r"```python\n(# checksum\.py.*?)```", text, re.S)
    assert snippet, "README lost its checksum snippet"
    namespace = {}
    exec(snippet.group(1), namespace)  # noqa: S102 - our own README
    assert namespace["checksum"](VECTOR_SECRET, *VECTOR_FIELDS) == VECTOR_CHECKSUM


def test_checksum_is_64_lowercase_hex():
    value = compute_checksum("k", "a", "b", 1, "INR", 2)
    assert re.fullmatch(r"[0-9a-f]{64}", value)


def test_verify_checksum_accepts_the_right_one():
    verify_checksum(VECTOR_SECRET, VECTOR_CHECKSUM, *VECTOR_FIELDS)


@pytest.mark.parametrize("given", [
    VECTOR_CHECKSUM.upper(),                 # the interface says lowercase
    VECTOR_CHECKSUM[:-1] + "0",
    VECTOR_CHECKSUM[:32],
    "",
    None,
    49900,
    ["x"],
    "é" * 64,
])
def test_verify_checksum_refuses_anything_else(given):
    with pytest.raises(InvalidSignature):
        verify_checksum(VECTOR_SECRET, given, *VECTOR_FIELDS)


def test_checksum_covers_every_field_in_order():
    fields = list(VECTOR_FIELDS)
    for i in range(len(fields)):
        changed = fields.copy()
        changed[i] = str(changed[i]) + "1"
        assert compute_checksum(VECTOR_SECRET, *changed) != VECTOR_CHECKSUM
    assert compute_checksum(VECTOR_SECRET, *reversed(fields)) != VECTOR_CHECKSUM


# --- timestamp -------------------------------------------------------------------------------

def test_timestamp_exactly_300_seconds_old_is_accepted():
    assert verify_timestamp(NOW - 300, now=NOW) == NOW - 300


def test_timestamp_301_seconds_old_is_request_expired():
    with pytest.raises(RequestExpired) as info:
        verify_timestamp(NOW - 301, now=NOW)
    assert info.value.code == "REQUEST_EXPIRED"


def test_current_timestamp_is_accepted():
    assert verify_timestamp(NOW, now=NOW) == NOW


@override_settings(REQUEST_CLOCK_SKEW_SECONDS=30)
def test_timestamp_within_the_clock_skew_allowance_is_accepted():
    assert verify_timestamp(NOW + 1, now=NOW) == NOW + 1
    assert verify_timestamp(NOW + 30, now=NOW) == NOW + 30


@override_settings(REQUEST_CLOCK_SKEW_SECONDS=30)
def test_timestamp_beyond_the_clock_skew_is_invalid_timestamp():
    with pytest.raises(InvalidTimestamp) as info:
        verify_timestamp(NOW + 31, now=NOW)
    assert info.value.code == "INVALID_TIMESTAMP"


@override_settings(REQUEST_CLOCK_SKEW_SECONDS=0)
def test_no_skew_allowance_makes_any_future_second_invalid():
    with pytest.raises(InvalidTimestamp):
        verify_timestamp(NOW + 1, now=NOW)


def test_default_clock_skew_is_the_documented_30_seconds():
    from django.conf import settings

    assert settings.REQUEST_CLOCK_SKEW_SECONDS == 30


@pytest.mark.parametrize("value", [None, ""])
def test_missing_timestamp_is_invalid_timestamp(value):
    with pytest.raises(InvalidTimestamp):
        verify_timestamp(value, now=NOW)


@pytest.mark.parametrize("value", [
    "abc", "1.5", 1.5, True, False, [NOW], {"t": NOW}, "１８００００００００", " 1800000000",
    "1e9", float("inf"), float("nan"), 10 ** 400, "9" * 5000,
])
def test_non_integer_timestamp_is_invalid_timestamp(value):
    with pytest.raises(InvalidTimestamp):
        verify_timestamp(value, now=NOW)


@pytest.mark.parametrize("value", [str(NOW), float(NOW)])
def test_integer_valued_strings_and_floats_are_accepted(value):
    """GET query parameters are strings; a JSON number like 1800000000.0 names a whole second."""
    assert verify_timestamp(value, now=NOW) == NOW


def test_milliseconds_are_in_the_future_not_silently_accepted():
    with pytest.raises(InvalidTimestamp):
        verify_timestamp(NOW * 1000, now=NOW)


def test_verify_signed_request_checks_the_timestamp_before_the_checksum():
    with pytest.raises(RequestExpired):
        verify_signed_request(VECTOR_SECRET, checksum="bad", timestamp=1767225600, fields=VECTOR_FIELDS[:4])


def test_verify_signed_request_signs_the_timestamp_as_a_decimal_integer():
    ts = int(time.time())
    good = compute_checksum(VECTOR_SECRET, *VECTOR_FIELDS[:4], ts)
    assert verify_signed_request(VECTOR_SECRET, checksum=good, timestamp=str(ts), fields=VECTOR_FIELDS[:4]) == ts
    assert verify_signed_request(VECTOR_SECRET, checksum=good, timestamp=float(ts), fields=VECTOR_FIELDS[:4]) == ts


# --- through a view --------------------------------------------------------------------------

def _post(api, merchant, body):
    return api.post("/t/signed", body, format="json", HTTP_X_API_KEY=merchant.api_key)


def _assert_error(response, code, status=400):
    assert response.status_code == status, response.content
    body = response.json()
    assert body == {"success": False, "errorCode": code, "errorMessage": body["errorMessage"],
                    "traceId": response["X-Trace-Id"], "error": {"code": code, "message": body["errorMessage"]}}
    return body


@pytest.mark.django_db
@pytest.mark.urls("tests.gateway.urls")
class TestThroughAView:
    def test_a_correctly_signed_request_is_accepted(self, api, acme):
        response = _post(api, acme, signed_body(acme))
        assert response.status_code == 200, response.content
        assert response.json()["success"] is True

    def test_a_wrong_checksum_is_invalid_signature(self, api, acme):
        _assert_error(_post(api, acme, signed_body(acme, checksum="0" * 64)), "INVALID_SIGNATURE")

    def test_a_checksum_made_with_another_secret_is_invalid_signature(self, api, acme, other_merchant):
        body = signed_body(acme)
        body["checksum"] = compute_checksum(other_merchant.secret_key, acme.code, body["merchantTxnId"],
                                            body["amount"], body["currency"], body["timestamp"])
        _assert_error(_post(api, acme, body), "INVALID_SIGNATURE")

    def test_a_tampered_amount_is_invalid_signature(self, api, acme):
        body = signed_body(acme)
        body["amount"] = 1
        _assert_error(_post(api, acme, body), "INVALID_SIGNATURE")

    def test_a_missing_timestamp_is_invalid_timestamp(self, api, acme):
        body = signed_body(acme)
        del body["timestamp"]
        _assert_error(_post(api, acme, body), "INVALID_TIMESTAMP")

    def test_an_old_timestamp_is_request_expired(self, api, acme):
        _assert_error(_post(api, acme, signed_body(acme, timestamp=int(time.time()) - 3600)), "REQUEST_EXPIRED")

    def test_a_future_timestamp_is_invalid_timestamp(self, api, acme):
        _assert_error(_post(api, acme, signed_body(acme, timestamp=int(time.time()) + 3600)), "INVALID_TIMESTAMP")

    def test_a_non_integer_timestamp_is_invalid_timestamp(self, api, acme):
        _assert_error(_post(api, acme, signed_body(acme, timestamp="soon")), "INVALID_TIMESTAMP")

    def test_an_overflowing_timestamp_is_invalid_timestamp_not_a_crash(self, api, acme):
        response = api.post("/t/signed", data=(
            '{"merchantId": "ACME", "merchantTxnId": "O1", "amount": 1, "currency": "INR", '
            '"timestamp": 1e400, "checksum": "x"}'), content_type="application/json",
            HTTP_X_API_KEY=acme.api_key)
        _assert_error(response, "INVALID_TIMESTAMP")
