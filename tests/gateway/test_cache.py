"""gateway.perf.cache: the Redis cache's `count`, on the real Redis the tests run against, and
`counter_hit` and `counter_take` on it and on the quick start's local-memory cache."""
import os
import uuid

import pytest
from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache

from gateway.perf.cache import counter_hit, counter_take


@pytest.fixture
def key():
    return f"test-count:{uuid.uuid4().hex}"


def redis_client():
    return cache._cache.get_client(write=True)


def held_connection():
    return cache._cache._held.connection


def test_count_counts_from_one_and_gives_the_counter_its_timeout(key):
    assert [cache.count(key, 5) for _ in range(3)] == [1, 2, 3]
    stored = cache.make_and_validate_key(key)
    assert int(redis_client().get(stored)) == 3
    assert 0 < redis_client().ttl(stored) <= 5


def test_later_hits_do_not_push_the_expiry_back(key):
    cache.count(key, 100)
    stored = cache.make_and_validate_key(key)
    redis_client().expire(stored, 2)
    cache.count(key, 100)
    assert redis_client().ttl(stored) <= 2


def test_count_loads_the_script_again_after_redis_forgot_it(key):
    cache.count(key, 5)
    redis_client().script_flush()
    assert cache.count(key, 5) == 2


def test_count_opens_a_new_connection_when_its_own_was_closed(key):
    cache.count(key, 5)
    connection = held_connection()
    host, port = connection._sock.getsockname()[:2]
    assert redis_client().client_kill(f"{host}:{port}")
    assert cache.count(key, 5) == 2
    assert held_connection() is connection and connection._sock is not None


def test_a_forked_child_counts_on_its_own_connection(key):
    cache.count(key, 5)
    parent_socket = held_connection()._sock
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: count, and say whether it talked on the parent's socket
        try:
            count = cache.count(key, 5)
            shared = held_connection()._sock is parent_socket
            os.write(write_end, f"{count} {shared}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    assert os.read(read_end, 100).decode() == "2 False"
    assert cache.count(key, 5) == 3


@pytest.mark.parametrize("where", ["redis", "local memory"])
def test_counter_hit_counts_a_window_from_one_on_either_cache(key, where):
    store = cache if where == "redis" else LocMemCache(f"test-{key}", {})
    assert [counter_hit(store, key, 5) for _ in range(3)] == [1, 2, 3]
    assert counter_hit(store, key + "-other", 5) == 1
    store.delete(key)  # the window ended
    assert counter_hit(store, key, 5) == 1


@pytest.mark.parametrize("where", ["redis", "local memory"])
def test_counter_take_counts_within_the_ceiling_and_leaves_the_count_past_it(key, where):
    store = cache if where == "redis" else LocMemCache(f"test-{key}", {})
    assert [counter_take(store, key, 5, 2) for _ in range(4)] == [1, 2, 0, 0]
    assert counter_hit(store, key, 5) == 3  # the two past the ceiling were never counted
    assert counter_take(store, key + "-other", 5, 1) == 1


def test_take_gives_a_new_counter_its_timeout(key):
    assert cache.take(key, 5, 1) == 1
    stored = cache.make_and_validate_key(key)
    assert 0 < redis_client().ttl(stored) <= 5
    assert cache.take(key, 5, 1) == 0 and int(redis_client().get(stored)) == 1
