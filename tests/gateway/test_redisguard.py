"""Every Redis client is bounded and fails open (gateway.core.redisguard, gateway.perf.cache,
gateway.core.broker): against a redis-server of the test's own, hung with SIGSTOP or killed."""
from __future__ import annotations

import shutil

import pytest
from django.core.cache import caches
from django.test import override_settings
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core import broker, redisguard
from gateway.celery import app
from gateway.settings import REDIS_TIMEOUT_SECONDS
from tests.gateway.test_settings import manage_check
from tests.support.spare_redis import SpareRedis

needs_redis_server = pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")


@pytest.fixture
def spare_redis():
    redis = SpareRedis().start()
    yield redis
    redis.stop()


@pytest.fixture
def spare_cache(spare_redis):
    """The project's cache backend, as settings configure it, on the spare Redis."""
    with override_settings(CACHES={"default": {
            "BACKEND": "gateway.perf.cache.RedisCache", "LOCATION": spare_redis.url,
            "OPTIONS": {"socket_timeout": REDIS_TIMEOUT_SECONDS, "socket_connect_timeout": REDIS_TIMEOUT_SECONDS}}}):
        yield caches["default"]


@pytest.fixture
def spare_broker(spare_redis, monkeypatch):
    """Publishing (gateway.core.broker) to the spare Redis, on a connection of its own."""
    monkeypatch.setattr(app.conf, "broker_url", spare_redis.url)
    broker._drop_connection()
    yield spare_redis
    broker._drop_connection()


@needs_redis_server
def test_a_hung_redis_times_out_the_cache_and_then_is_left_alone(spare_redis, spare_cache, json_log):
    assert spare_cache.count("c", 5) == 1
    spare_redis.pause()
    try:
        # Without a socket timeout this waits until Redis answers again (here: for ever).
        with pytest.raises(RedisTimeoutError):
            spare_cache.get("c")
        # Redis rests: the next calls fail at once, without a round trip.
        with pytest.raises(redisguard.RedisUnavailable):
            spare_cache.count("c", 5)
        with pytest.raises(redisguard.RedisUnavailable):
            spare_cache.set("k", 1)
    finally:
        spare_redis.resume()
    redisguard._state.resting_until = 0.0  # the rest is over (a second, in real time)
    assert spare_cache.count("c", 5) == 2
    text, _ = json_log()
    assert "Redis unreachable from the cache (TimeoutError" in text and "Redis answers again" in text


@needs_redis_server
def test_the_counter_reconnects_once_after_a_redis_restart(spare_redis, spare_cache):
    assert spare_cache.count("c", 5) == 1
    spare_redis.kill()
    spare_redis.start()
    assert spare_cache.count("c", 5) == 1  # a new, empty Redis: no error on the stale connection


@needs_redis_server
def test_rate_limits_fail_open_while_redis_hangs(spare_redis, spare_cache, api, merchant, json_log):
    spare_redis.pause()
    try:
        for _ in range(3):
            response = api.get("/api/v2/refunds", {"merchantId": merchant.code, "sabpaisaTxnId": "SPNONE"},
                               HTTP_X_API_KEY=merchant.api_key)
            assert response.status_code < 500 and "X-RateLimit-Limit" not in response
    finally:
        spare_redis.resume()
    text, _ = json_log()
    assert text.count("rate limit not applied") == 1  # then Redis rests, and nobody waits on it


@needs_redis_server
def test_publishing_to_a_hung_broker_gives_up_and_says_who_sends_instead(spare_broker, json_log, transactional_db):
    from payments.tasks import reversals_pending_sweep

    assert broker.tasks_publish([(reversals_pending_sweep, (), None)], what="probe", fallback="nobody") is True
    spare_broker.pause()
    try:
        assert broker.tasks_publish([(reversals_pending_sweep, (), None)], what="sweep message",
                                    fallback="the beat sends another") is False
        # Within the rest, nothing is attempted at all.
        assert broker.tasks_publish([(reversals_pending_sweep, (), None)], what="second message",
                                    fallback="the beat sends another") is False
    finally:
        spare_broker.resume()
    text, _ = json_log()
    assert "sweep message not queued" in text and "the beat sends another" in text
    assert "Redis unreachable from the broker" in text


@needs_redis_server
def test_publishing_survives_a_broker_restart(spare_broker, transactional_db):
    from payments.tasks import reversals_pending_sweep

    assert broker.tasks_publish([(reversals_pending_sweep, (), None)], what="before", fallback="-")
    spare_broker.kill()
    assert not broker.tasks_publish([(reversals_pending_sweep, (), None)], what="down", fallback="-")
    spare_broker.start()
    redisguard.reset()
    # The held connection is the dead server's: it is opened again, once, and the message goes.
    assert broker.tasks_publish([(reversals_pending_sweep, (), None)], what="after", fallback="-")


@pytest.mark.parametrize("env, message", [
    ({"REDIS_TIMEOUT_SECONDS": "0"}, "REDIS_TIMEOUT_SECONDS"),
    ({"REDIS_TIMEOUT_SECONDS": "30"}, "REDIS_TIMEOUT_SECONDS"),
    ({"REDIS_RETRY_AFTER_SECONDS": "-1"}, "REDIS_RETRY_AFTER_SECONDS"),
])
def test_a_redis_timeout_that_cannot_keep_requests_prompt_is_refused_at_start(env, message):
    result = manage_check(**env)
    assert result.returncode != 0 and message in result.stderr

