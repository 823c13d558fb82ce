"""One scheduler at a time: celery beat runs the schedule only while it holds the beat lock.

Running beat twice (a second gateway-beat.service, or `-B` on every worker, a common mistake)
sends every sweep twice. The sweeps are built to survive that (rows are claimed with SKIP
LOCKED), but the retention jobs and the expiry sweep would do their work twice as often and
the database would pay for it. So the scheduler is `SingleBeatScheduler` (settings:
CELERY_BEAT_SCHEDULER): before it sends anything it must hold a lock in Redis, the broker
every beat shares, a key whose value names its holder and which lives BEAT_LOCK_SECONDS
unless renewed. The holder renews it at least three times per lifetime. Another beat
started beside it dispatches nothing: it logs that it stands by, asks again every second,
and takes over within BEAT_LOCK_SECONDS of the holder's end (at once when the holder stops
cleanly, since it gives the lock back).

Why Redis and not a PostgreSQL advisory lock: behind a transaction-mode PgBouncer
(DATABASE_POOLER=transaction) a session's advisory lock lives on whichever server connection
the statement ran on, and is neither held nor released where the beat expects. Redis has no
pooler in front of it, and without Redis beat cannot send anything anyway. While Redis is
unreachable no beat holds the lock (nothing could be sent); when it comes back, empty, the
first beat to ask takes the lock. Without REDIS_URL (the quick start's single machine, with
its file-system broker) there is nothing shared to lock and the schedule simply runs.
"""
from __future__ import annotations

import logging
import os
import socket
import time
import uuid

import redis
from celery.beat import PersistentScheduler
from django.conf import settings

logger = logging.getLogger("gateway.beat")

LOCK_KEY = "gateway:beat-lock"
STANDBY_CHECK_SECONDS = 1.0

# Take the lock if nobody has it, renew it if we have it; 1 when we hold it afterwards.
_TAKE_OR_RENEW = """
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""
# Give the lock back, if it is still ours.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class BeatLock:
    """The lock itself: `hold()` takes or renews it and says whether this process holds it."""

    def __init__(self, url: str, seconds: float, *, holder: str | None = None):
        self.seconds = seconds
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._take_or_renew = self._client.register_script(_TAKE_OR_RENEW)
        self._release = self._client.register_script(_RELEASE)

    def hold(self) -> bool:
        return bool(self._take_or_renew(keys=[LOCK_KEY], args=[self.holder, int(self.seconds * 1000)]))

    def holder_now(self) -> str:
        value = self._client.get(LOCK_KEY)
        return value.decode() if value else ""

    def release(self) -> None:
        self._release(keys=[LOCK_KEY], args=[self.holder])


class SingleBeatScheduler(PersistentScheduler):
    """celery beat's PersistentScheduler (the schedule file), sending only while it holds the
    beat lock; otherwise it stands by."""

    def __init__(self, *args, **kwargs):
        url = settings.REDIS_URL
        self.lock = BeatLock(url, settings.BEAT_LOCK_SECONDS) if url else None
        self._renewed_at = 0.0
        self._holding = False
        super().__init__(*args, **kwargs)

    def _hold(self) -> bool:
        if self.lock is None:
            return True
        now = time.monotonic()
        if self._holding and now - self._renewed_at < self.lock.seconds / 3:
            return True
        try:
            holding = self.lock.hold()
        except redis.RedisError as exc:
            if self._holding:
                logger.warning("beat lock: Redis unreachable (%s); sending nothing until it is back", exc)
            self._holding = False
            return False
        if holding:
            self._renewed_at = now
            if not self._holding:
                logger.info("beat lock taken by %s: this beat sends the schedule", self.lock.holder)
        elif self._holding or not self._renewed_at:
            logger.warning("another beat holds the beat lock (%s): this one (%s) stands by and sends nothing",
                           self._holder_now(), self.lock.holder)
            self._renewed_at = now  # logged once per standby, not every second
        self._holding = holding
        return holding

    def _holder_now(self) -> str:
        try:
            return self.lock.holder_now() or "nobody, a moment ago"
        except redis.RedisError:
            return "unknown"

    def tick(self, *args, **kwargs):
        if not self._hold():
            return STANDBY_CHECK_SECONDS
        wait = super().tick(*args, **kwargs)
        if self.lock is not None:
            wait = min(wait, self.lock.seconds / 3)
        return wait

    def close(self):
        try:
            super().close()
        finally:
            if self.lock is not None and self._holding:
                try:
                    self.lock.release()
                except redis.RedisError:
                    pass  # it ends with its lifetime
                self._holding = False
