"""Django's Redis cache backend without two costs that sat on every API request.

- Django builds a new `redis.Redis` object for every cache call; its constructor fills a table
  of some 150 response callbacks, which costs more CPU than the round trip to Redis. Here each
  connection pool (the one Django already keeps) gets one client, made once. `redis.Redis` is
  thread-safe, and its pool reconnects after a fork or a Redis restart.
- `incr` asked EXISTS and then INCRBY: two round trips. Here one Lua call does both, with
  Django's contract unchanged (ValueError when the key does not exist).

The rate limiter (gateway.ratelimit) makes one `incr` on every API request.
"""
from __future__ import annotations

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient

_INCR_IF_EXISTS = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return false
"""


class GatewayRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}
        self._scripts = {}

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


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = GatewayRedisCacheClient
