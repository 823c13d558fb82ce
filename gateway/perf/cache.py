"""Django's Redis cache backend without two costs that sat on every API request.

- Django builds a new `redis.Redis` object for every cache call; its constructor fills a table
  of some 150 response callbacks, which costs more CPU than the round trip to Redis. Here each
  connection pool (the one Django already keeps) gets one client, made once. `redis.Redis` is
  thread-safe, and its pool reconnects after a fork or a Redis restart.
- `incr` asked EXISTS and then INCRBY: two round trips. Here one Lua call does both, with
  Django's contract unchanged (ValueError when the key does not exist).

And one operation Django's cache has not: `count(key, timeout)`, one more hit on a counter that
is created with its timeout, in one round trip. It skips redis-py's command machinery (retry
wrapper, pool checkout and return, event dispatch, response callbacks: 180 µs of CPU a call
became 110, measured in-process) and talks to Redis on a connection each thread keeps.
`counter_hit` counts with it on Redis, and with add and incr on any other Django cache; `take`
and `counter_take` count a hit only while it fits under a ceiling, in the same atomic step (the
processors' outbound limit, payments.acquirer.limits). Only the rate limiters
(gateway.platform.ratelimit.window_hit and window_take) call them: every API request is counted
there, and the checkout's wrong links (payments.checkout.access) through it.

Every operation is bounded and guarded (gateway.core.redisguard): the connections have socket and
connect timeouts (REDIS_TIMEOUT_SECONDS, set in gateway.settings), a timeout is never retried,
and after a failure the process does not ask Redis again for REDIS_RETRY_AFTER_SECONDS: the
operations raise RedisUnavailable (a redis ConnectionError) at once, for their callers to fail
open.
"""
from __future__ import annotations

import hashlib
import os
import threading

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core import redisguard

_INCR_IF_EXISTS = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return false
"""

# The counter, and its expiry set by the hit that creates it (so a counter never outlives its
# timeout, even when two workers create it at once).
_COUNT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return count
"""
_COUNT_SHA = hashlib.sha1(_COUNT.encode()).hexdigest()

# The same hit, counted only while it fits under a ceiling: a hit past it leaves the counter as
# it was, in the same atomic step, so that no caller ever sees it raised by one that was refused
# (an INCR and a later DECR did: in a burst, the refused hits held the slots of the calls that
# fitted).
_TAKE = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
if count > tonumber(ARGV[2]) then
  redis.call('DECR', KEYS[1])
  return 0
end
return count
"""
_TAKE_SHA = hashlib.sha1(_TAKE.encode()).hexdigest()


class _Held(threading.local):
    """This thread's own Redis connection for `count`, and the process it was opened in (a
    forked child must not talk on its parent's socket)."""
    pid: int | None = None
    connection = None


class GatewayRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}
        self._scripts = {}
        self._held = _Held()

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client

    def incr(self, key, delta):
        client = self.get_client(key, write=True)
        script = self._scripts.get(client)
        if script is None:
            # EVALSHA, and EVAL again by itself should Redis have forgotten the script (a restart).
            script = self._scripts[client] = client.register_script(_INCR_IF_EXISTS)
        value = script(keys=[key], args=[delta], client=client)
        if value is None:
            raise ValueError("Key '%s' not found." % key)
        return value

    def count(self, key: str, timeout: int) -> int:
        """One more hit on the counter `key` (created with `timeout` seconds to live); the count
        so far. A connection that broke since the last call (Redis restarted) is opened again
        once; a Redis that cannot be reached raises redis' ConnectionError or TimeoutError."""
        return self._run(_COUNT, _COUNT_SHA, key, timeout)

    def take(self, key: str, timeout: int, ceiling: int) -> int:
        """`count`, but only while the count stays within `ceiling`: the count so far, or 0 when
        the hit did not fit (and was not counted)."""
        return self._run(_TAKE, _TAKE_SHA, key, timeout, ceiling)

    def _run(self, script: str, sha: str, key: str, *args) -> int:
        held = self._held
        if held.pid != os.getpid():
            # Taken out of Django's pool for good: one connection per thread.
            held.connection, held.pid = self._get_connection_pool(True).get_connection(), os.getpid()
        connection = held.connection
        try:
            return self._run_on(connection, script, sha, key, args)
        except RedisTimeoutError:
            raise  # Redis is hung: asking again would only double the wait
        except RedisConnectionError:
            # The connection closed itself (Redis restarted); sending again opens a new one.
            return self._run_on(connection, script, sha, key, args)

    @staticmethod
    def _run_on(connection, script: str, sha: str, key: str, args: tuple) -> int:
        try:
            connection.send_command("EVALSHA", sha, 1, key, *args, check_health=False)
            return connection.read_response()
        except NoScriptError:  # Redis restarted and forgot the script: EVAL loads it again
            connection.send_command("EVAL", script, 1, key, *args, check_health=False)
            return connection.read_response()


# Every operation of Django's client that talks to Redis, and ours.
_OPERATIONS = ("add", "get", "set", "touch", "delete", "get_many", "has_key", "incr", "set_many", "delete_many",
               "clear", "count", "take")
for _name in _OPERATIONS:
    setattr(GatewayRedisCacheClient, _name, redisguard.guarded("cache")(getattr(GatewayRedisCacheClient, _name)))


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = GatewayRedisCacheClient

    def count(self, key: str, timeout: int, version=None) -> int:
        """One more hit on the counter `key`, which lives `timeout` seconds from its first hit;
        returns the count so far (1 for the first). One round trip."""
        return self._cache.count(self.make_and_validate_key(key, version=version), timeout)

    def take(self, key: str, timeout: int, ceiling: int, version=None) -> int:
        """One more hit on the counter `key` if the count stays within `ceiling`: the count so far,
        or 0 when it did not fit and was not counted. One round trip, atomic."""
        return self._cache.take(self.make_and_validate_key(key, version=version), timeout, ceiling)


def counter_hit(cache, key: str, timeout: int) -> int:
    """One more hit on the counter `key` of the Django cache `cache`, a counter that lives
    `timeout` seconds from its first hit (a fixed window); the count so far, 1 for the first.
    One round trip on Redis (RedisCache.count); on any other cache (the quick start's local
    memory) incr, or add for the window's first hit."""
    count = getattr(cache, "count", None)
    if count is not None:
        return count(key, timeout)
    try:
        return cache.incr(key)
    except ValueError:  # the window's first hit
        if cache.add(key, 1, timeout=timeout):
            return 1
        return cache.incr(key)  # another process started the window just now


def counter_take(cache, key: str, timeout: int, ceiling: int) -> int:
    """`counter_hit` within `ceiling`: the count so far, or 0 when this hit would pass the ceiling
    and was not counted. Atomic on Redis (RedisCache.take); on any other cache (one process's
    local memory) a hit and, past the ceiling, its undoing."""
    take = getattr(cache, "take", None)
    if take is not None:
        return take(key, timeout, ceiling)
    count = counter_hit(cache, key, timeout)
    if count <= ceiling:
        return count
    cache.decr(key)
    return 0
