"""Per-merchant rate limit: a fixed one-second window counted in Django's cache (Redis when
REDIS_URL is set), so every web worker shares one count.

The limit is the merchant's own `rate_limit` or DEFAULT_RATE_LIMIT_PER_SECOND. DRF checks
throttles after authentication, so a request with a missing or wrong key is answered 401
before it is counted, and carries no X-RateLimit headers (per-address limits on such requests
belong in the reverse proxy). Views without authentication (the schema, the docs page, the
sandbox UPI app) are counted per client address against the default limit: the address from
gateway.core.clientip, never DRF's own, which believes whatever X-Forwarded-For a client sends.

If the cache cannot be reached, or does not answer within REDIS_TIMEOUT_SECONDS, the request
is let through: a Redis failure must not stop payments. Each failure is logged; while Redis
rests after one (gateway.core.redisguard: a second) requests pass without asking it.

`window_hit` (and `window_take`, a hit only while it fits) is the counter other limiters count with (the checkout's wrong links,
payments.checkout.access), so that only this module knows how a count reaches Redis
(gateway.perf.cache: one round trip).
"""
import logging
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from gateway.core import redisguard
from gateway.core.clientip import client_ip
from gateway.perf.cache import counter_hit, counter_take
from gateway.platform.models import Merchant

logger = logging.getLogger("gateway.ratelimit")


def window_hit(key: str, seconds: int) -> int:
    """One more hit on the fixed-window counter `key` in the shared cache (Redis), a counter
    that lives `seconds` from its first hit; the count so far, 1 for the first. One round trip.
    Raises what the cache raises when Redis cannot be reached (redisguard.RedisUnavailable,
    redisguard.OUTAGE_ERRORS), for the caller to fail open."""
    return counter_hit(cache, key, seconds)


def window_take(key: str, seconds: int, ceiling: int) -> int:
    """`window_hit` counted only if the count stays within `ceiling`: the count so far, or 0 when
    the window is full (the hit was not counted, and no other caller saw it counted). Raises as
    window_hit does."""
    return counter_take(cache, key, seconds, ceiling)


class MerchantRateThrottle(BaseThrottle):
    _wait = 1.0

    def allow_request(self, request, view):
        merchant = request.user if isinstance(request.user, Merchant) else None
        if merchant is not None:
            limit, ident = merchant.effective_rate_limit, f"m:{merchant.pk}"
        else:
            limit, ident = settings.DEFAULT_RATE_LIMIT_PER_SECOND, f"ip:{self.get_ident(request)}"
        window = int(time.time())
        key = f"rl:{ident}:{window}"
        try:
            count = window_hit(key, _COUNTER_SECONDS)
        except redisguard.RedisUnavailable:
            return True  # Redis failed a moment ago and rests: fail open, logged then
        except redisguard.OUTAGE_ERRORS as exc:
            logger.warning("rate limit not applied: Redis is unreachable (%s)", type(exc).__name__)
            return True
        except Exception:
            logger.exception("rate limit not applied: the count failed")
            return True
        request.rate_limit = (limit, max(0, limit - count))
        self._wait = window + 1 - time.time()
        return count <= limit

    def get_ident(self, request):
        return client_ip(request)

    def wait(self):
        return max(1.0, self._wait)


# A window's counter outlives its second a little, for requests that read the clock just before
# the window ended.
_COUNTER_SECONDS = 5

