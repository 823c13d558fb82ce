"""gateway.platform.api.RequestSerializer answers exactly as DRF's own Serializer loop would: the same
validated values, or the same errors (messages, codes and the order fields are named in), for
any JSON object, so skipping absent optional fields changes nothing but the time it takes."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from gateway.platform.api import RequestSerializer
from payments.api.hosted_serializers import HostedPaymentCreateSerializer
from payments.api.s2s_serializers import S2SPaymentRequestSerializer

SERIALIZERS = [S2SPaymentRequestSerializer, HostedPaymentCreateSerializer]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**9), st.floats(allow_nan=False),
                    st.text(max_size=8), st.sampled_from(["INR", "UPI_QR", "a@b.in", "9876543210", "f" * 64,
                                                          "http://shop.test/return", ""]))
values = st.one_of(scalars, st.lists(scalars, max_size=2), st.dictionaries(st.text(max_size=5), scalars, max_size=3))


def outcome(serializer, to_internal_value, body):
    try:
        return "ok", to_internal_value(serializer, body)
    except serializers.ValidationError as exc:
        details = exc.get_full_details()
        return "error", list(details), details


def assert_same(serializer_class, body):
    serializer = serializer_class()
    ours = outcome(serializer, RequestSerializer.to_internal_value, body)
    drfs = outcome(serializer, serializers.Serializer.to_internal_value, body)
    assert ours == drfs, body


def valid_body(serializer_class) -> dict:
    body = {"merchantId": "SHOP", "merchantTxnId": "T-1", "amount": 10_000, "currency": "INR",
            "customerName": "Asha Rao", "customerEmail": "asha@example.com", "customerPhone": "9876543210",
            "checksum": "a" * 64, "timestamp": 1_700_000_000}
    if serializer_class is S2SPaymentRequestSerializer:
        body["paymentMode"] = "UPI_QR"
    else:
        body["returnUrl"] = "http://shop.test/return"
    return body


def test_a_valid_body_gives_the_same_values_with_and_without_optional_fields():
    for serializer_class in SERIALIZERS:
        body = valid_body(serializer_class)
        assert_same(serializer_class, body)
        assert_same(serializer_class, {**body, "udf1": "x", "udf20": None, "description": "", "metadata": None})
        assert outcome(serializer_class(), RequestSerializer.to_internal_value, body)[0] == "ok"


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SERIALIZERS), st.data())
def test_any_json_object_gets_drfs_answer(serializer_class, data):
    names = list(serializer_class().fields)
    base = data.draw(st.sampled_from([{}, valid_body(serializer_class)]))
    changes = data.draw(st.dictionaries(st.sampled_from(names + ["unknown", "udf21"]), values, max_size=6))
    removed = data.draw(st.lists(st.sampled_from(names), max_size=3))
    body = {**base, **changes}
    for name in removed:
        body.pop(name, None)
    assert_same(serializer_class, body)
