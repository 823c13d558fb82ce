"""Fixtures of the S2S tests: a merchant with S2S and a poster (the signed request body:
tests.support.factories.signed_body)."""
from __future__ import annotations

import json

import pytest
from tests.support.factories import TestMerchant, make_merchant

URL = "/api/v2/payments/s2s"


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
