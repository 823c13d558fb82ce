"""Per-merchant rate limit: a one-second window counted in Redis through Django's cache."""
import time

import pytest
from django.core.cache import cache

from tests.support.factories import make_merchant

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.gateway.urls")]


def burst(api, merchant, n, path="/t/whoami", method="get"):
    """Send `n` requests inside one one-second window. The window is int(time.time()), so a
    burst that straddles a boundary is thrown away and sent again in the next window."""
    for _ in range(10):
        while time.time() % 1 > 0.5:  # start early in a window, so the burst fits in it
            time.sleep(0.05)
        window = int(time.time())
        responses = [getattr(api, method)(path, HTTP_X_API_KEY=merchant.api_key) for _ in range(n)]
        if int(time.time()) == window:
            return responses
        cache.clear()
    pytest.fail("could not fit the burst into one second ten times")


def test_third_request_in_a_second_over_a_limit_of_two_is_rate_limited(api):
    merchant = make_merchant(code="LIMIT2", rate_limit=2)
    first, second, third = burst(api, merchant, 3)

    assert first.status_code == 200 and second.status_code == 200
    assert (first["X-RateLimit-Limit"], first["X-RateLimit-Remaining"]) == ("2", "1")
    assert (second["X-RateLimit-Limit"], second["X-RateLimit-Remaining"]) == ("2", "0")

    assert third.status_code == 429
    body = third.json()
    assert body["errorCode"] == "RATE_LIMITED" and body["success"] is False
    assert body["traceId"] == third["X-Trace-Id"]
    assert third["Retry-After"] == "1"
    assert (third["X-RateLimit-Limit"], third["X-RateLimit-Remaining"]) == ("2", "0")


def test_the_limit_is_per_merchant(api):
    busy = make_merchant(code="BUSY", rate_limit=1)
    calm = make_merchant(code="CALM", rate_limit=1)
    for _ in range(10):
        window = int(time.time())
        statuses = [api.get("/t/whoami", HTTP_X_API_KEY=busy.api_key).status_code for _ in range(2)]
        calm_status = api.get("/t/whoami", HTTP_X_API_KEY=calm.api_key).status_code
        if int(time.time()) == window:
            break
        cache.clear()
    assert statuses == [200, 429]
    assert calm_status == 200


def test_the_limit_counts_in_the_shared_cache(api):
    """Every web worker must see one count: the counter lives in the cache, not in memory."""
    merchant = make_merchant(code="SHARED", rate_limit=5)
    response = burst(api, merchant, 1)[0]
    assert response["X-RateLimit-Remaining"] == "4"
    keys = [key for key in cache._cache.get_client().keys("*") if b"rl:m:" in key]
    assert keys, "the rate-limit counter is not in Redis"


def test_error_responses_of_an_authenticated_merchant_carry_the_rate_limit_headers(api):
    merchant = make_merchant(code="ERRS", rate_limit=50)
    response = api.post("/t/signed", {"merchantId": "ERRS"}, format="json", HTTP_X_API_KEY=merchant.api_key)
    assert response.status_code == 400
    assert response["X-RateLimit-Limit"] == "50"
    assert response["X-RateLimit-Remaining"].isdigit()
    assert response["X-Trace-Id"] == response.json()["traceId"]


def test_merchant_without_its_own_limit_gets_the_default(api, settings):
    settings.DEFAULT_RATE_LIMIT_PER_SECOND = 7
    merchant = make_merchant(code="DEFAULT", rate_limit=None)
    response = api.get("/t/whoami", HTTP_X_API_KEY=merchant.api_key)
    assert response["X-RateLimit-Limit"] == "7"


def test_unauthenticated_requests_get_no_rate_limit_headers(api):
    """Documented: authentication runs before the limit, which is per merchant."""
    response = api.get("/t/whoami", HTTP_X_API_KEY="gwk_" + "0" * 32)
    assert response.status_code == 401
    assert "X-RateLimit-Limit" not in response


def test_rate_limiting_fails_open_when_the_cache_is_down(api, acme, monkeypatch, json_log):
    """A Redis outage must not stop payments: the request is served without limit headers
    and the outage is logged. The cache here is a real Redis client pointed at a port where
    nothing listens."""
    from gateway.platform import ratelimit
    from gateway.perf.cache import RedisCache

    unreachable = RedisCache("redis://127.0.0.1:9/0", {})
    monkeypatch.setattr(ratelimit, "cache", unreachable)
    response = api.get("/t/whoami", HTTP_X_API_KEY=acme.api_key)
    assert response.status_code == 200
    assert "X-RateLimit-Limit" not in response
    text, lines = json_log()
    assert "rate limit not applied" in text


def test_the_unauthenticated_limit_counts_the_real_address_not_a_forged_x_forwarded_for(settings, rf):
    """Issue 18 item 5: DRF's own address believed X-Forwarded-For, so a client sending a new
    value with every request was never limited on the schema, docs and sandbox pay endpoints."""
    from gateway.platform.ratelimit import MerchantRateThrottle

    settings.TRUSTED_PROXY_COUNT = 0
    forged = rf.get("/api/schema/", REMOTE_ADDR="192.0.2.7", HTTP_X_FORWARDED_FOR="198.51.100.1")
    assert MerchantRateThrottle().get_ident(forged) == "192.0.2.7"
    settings.DEFAULT_RATE_LIMIT_PER_SECOND = 2
    from django.test import Client

    client = Client(REMOTE_ADDR="192.0.2.7")
    for _ in range(10):
        while time.time() % 1 > 0.5:  # start early in a window, so the three fit in it
            time.sleep(0.05)
        window = int(time.time())
        statuses = [client.post("/sandbox/upi/pay", {}, content_type="application/json",
                                HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code for n in range(3)]
        if int(time.time()) == window:
            break
        cache.clear()
    assert statuses == [400, 400, 429]
