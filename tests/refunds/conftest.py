import json
import urllib.error
import urllib.request

import pytest


@pytest.fixture
def post_refund(api, merchant):
    """POST /api/v2/refunds as `merchant` (or `as_=` another TestMerchant) through the test
    client, with X-Api-Key only, as the official SDK sends it."""

    def post(body, *, as_=None, headers=None):
        who = as_ or merchant
        return api.post("/api/v2/refunds", body, format="json",
                        **{"HTTP_X_API_KEY": who.api_key, **(headers or {})})

    return post


def http(method: str, url: str, *, body=None, headers=None, timeout: float = 30.0):
    """A real HTTP request: (status, parsed JSON body)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
