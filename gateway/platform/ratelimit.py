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
"""
import logging
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from gateway.core import redisguard
from gateway.perf.cache import counter_hit
from gateway.core.clientip import client_ip
from gateway.platform.models import Merchant

logger = logging.getLogger("gateway.ratelimit")


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
            count = counter_hit(cache, key, _COUNTER_SECONDS)
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

