"""Fixtures of the S2S tests: a merchant with S2S, a signed request body, a poster."""
from __future__ import annotations

import itertools
import json

import pytest
from tests.support.factories import TestMerchant, make_merchant, now

URL = "/api/v2/payments/s2s"

_txn = itertools.count(1)


def signed_body(tm: TestMerchant, **overrides) -> dict:
    """A valid S2S request of `tm`, with `overrides` applied and the checksum computed over the
    result (pass checksum=... to override it too; a value of `...` drops the field)."""
    body = {
        "merchantId": tm.code,
        "merchantTxnId": f"ORD-{next(_txn)}-{now()}",
        "amount": 12345,
        "currency": "INR",
        "customerName": "Asha Rao",
        "customerEmail": "asha@example.com",
        "customerPhone": "+91 98765 43210",
        "paymentMode": "UPI_QR",
        "timestamp": now(),
    }
    body.update({k: v for k, v in overrides.items() if k != "checksum"})
    body = {k: v for k, v in body.items() if v is not ...}
    if "checksum" in overrides:
        if overrides["checksum"] is not ...:
            body["checksum"] = overrides["checksum"]
    else:
        body["checksum"] = tm.checksum(body.get("merchantId"), body.get("merchantTxnId"), body.get("amount"),
                                       body.get("currency"), body.get("timestamp"))
    return body


@pytest.fixture
def s2s_merchant(db) -> TestMerchant:
    return make_merchant(name="Asha's Tea & Coffee Co.")


@pytest.fixture
def post(api):
    """post(tm, body, key=None, headers=None) -> response of POST /api/v2/payments/s2s."""

    def _post(tm: TestMerchant, body, *, key: str | None = None, headers: dict | None = None, raw: bytes | None = None):
        h = dict(tm.headers)
        if key is not None:
            h["HTTP_X_IDEMPOTENCY_KEY"] = key
        h.update(headers or {})
        data = raw if raw is not None else json.dumps(body)
        content_type = h.pop("CONTENT_TYPE", "application/json")
        return api.generic("POST", URL, data, content_type=content_type, **h)

    return _post


def assert_error(response, code: str, status: int = 400, field: str | None = None):
    body = response.json()
    assert response.status_code == status, body
    assert body["success"] is False
    assert body["errorCode"] == code, body
    assert body["traceId"] and body["traceId"] == response["X-Trace-Id"]
    if field is not None:
        assert body["errorMessage"].startswith(field), body
    return body
