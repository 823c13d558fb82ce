"""Publishing Celery tasks from a request (after its transaction commits) without ever making
the customer wait for the broker.

Every task published here is optional by design: the row it is about (a webhook delivery, a
refund, a reversal, a sandbox approval) is already committed, and a beat sweep picks it up if
the message never arrives. So a publish is one bounded attempt:

- on a connection of this thread's own with socket and connect timeouts of
  REDIS_TIMEOUT_SECONDS (Celery's shared producer pool has the worker's longer ones);
- a broken connection (Redis restarted since its last use) is opened again once, at once; a
  timeout is not retried (Celery's own publishing retries, for seconds, are off);
- while Redis rests after an error (gateway.core.redisguard) nothing is attempted.

`tasks_publish` never raises: it logs what was not queued, with who will send it instead, and
returns False.
"""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable

from django.conf import settings
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core import redisguard

logger = logging.getLogger("gateway.broker")


class _Held(threading.local):
    pid: int | None = None
    connection = None


_held = _Held()


def _connection():
    """This thread's publishing connection (a forked child opens its own)."""
    if _held.pid != os.getpid() or _held.connection is None:
        from celery import current_app as app  # the project's app (gateway.celery), without importing the wiring

        timeout = settings.REDIS_TIMEOUT_SECONDS
        _held.connection = app.connection_for_write(
            connect_timeout=timeout,
            transport_options={"socket_timeout": timeout, "socket_connect_timeout": timeout})
        _held.pid = os.getpid()
    return _held.connection


def _drop_connection() -> None:
    connection, _held.connection = _held.connection, None
    if connection is not None:
        try:
            connection.release()
        except Exception:  # noqa: BLE001 - it is broken already; a new one is opened next time
            pass


@redisguard.guarded("broker")
def _publish(messages: list[tuple]) -> None:
    for attempt in (1, 2):
        connection = _connection()
        try:
            for task, args, countdown, *kwargs in messages:
                task.apply_async(args, kwargs=kwargs[0] if kwargs else None, countdown=countdown,
                                 connection=connection, retry=False)
            return
        except BaseException as exc:
            _drop_connection()  # whatever state it is in, the next publish starts afresh
            # A connection Redis closed (it restarted since this one was last used) is opened
            # again, once, at once. A timeout is not retried: Redis is hung, and waiting twice
            # as long would not change that. (A message sent twice is harmless: every task
            # acts on what its row says is due.)
            if attempt == 2 or _is_timeout(exc) or not isinstance(exc, redisguard.OUTAGE_ERRORS):
                raise


def _is_timeout(exc: BaseException) -> bool:
    while exc is not None:
        if isinstance(exc, (RedisTimeoutError, TimeoutError)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def tasks_publish(messages: Iterable[tuple], *, what: str, fallback: str) -> bool:
    """Publish `messages`, each (task, args tuple, countdown seconds or None[, kwargs dict]), in one bounded
    attempt (the module's docstring). `what` names them and `fallback` says who sends them
    otherwise, for the log line when they could not be queued. True when all were queued."""
    messages = list(messages)
    if not messages:
        return True
    try:
        _publish(messages)
        return True
    except Exception as exc:  # noqa: BLE001 - whatever the broker raises, the rows stay due
        logger.warning("%s not queued (%s); %s", what, type(exc).__name__, fallback)
        return False

