"""Per-merchant rate limit: a fixed one-second window counted in Django's cache (Redis when
REDIS_URL is set), so every web worker shares one count.

The limit is the merchant's own `rate_limit` or DEFAULT_RATE_LIMIT_PER_SECOND. DRF checks
throttles after authentication, so a request with a missing or wrong key is answered 401
before it is counted, and carries no X-RateLimit headers (per-address limits on such requests
belong in the reverse proxy). Views without authentication (the schema) are counted per client
address against the default limit.

If the cache cannot be reached the request is let through and the outage logged: a Redis
failure must not stop payments.
"""
import logging
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from gateway.models import Merchant

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
            try:
                # One round trip in the common case: this window's counter exists already.
                count = cache.incr(key)
            except ValueError:  # the window's first request (or its counter was evicted)
                if cache.add(key, 1, timeout=5):
                    count = 1
                else:  # another worker started the window just now
                    try:
                        count = cache.incr(key)
                    except ValueError:  # evicted between add and incr
                        cache.set(key, 1, timeout=5)
                        count = 1
        except Exception:
            logger.exception("rate limit not applied: the cache is unreachable")
            return True
        request.rate_limit = (limit, max(0, limit - count))
        self._wait = window + 1 - time.time()
        return count <= limit

    def wait(self):
        return max(1.0, self._wait)
