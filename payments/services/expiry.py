"""Expiry: the beat's payments sweep (`payments-expire`, every second) expires every open
payment whose `expiresAt` has passed, so a payment ends within about a second of its deadline.

There is no Celery task per payment at its deadline (there was, until the load benchmark):
queuing one cost each creation about a millisecond of CPU in the web process and as much again
in the worker, which then held every such message in memory until its time came; and Redis
hands a message back to the queue when it is unacknowledged for longer than its visibility
timeout (an hour), so a transfer's 72-hour expiry would have been delivered again every hour.
The sweep is one indexed query when nothing is due, needs nothing queued and nothing kept, and
survives a lost message, a dead worker or a flushed broker by construction. Pages and payers
that meet an overdue payment expire it on the spot (payments.services.hosted, .upi).

Neither expires a payment whose acquirer call is in flight: the expiry waits for it, at most
EXPIRY_WAITS_FOR_CALL (60 s; payments.services.transitions), and an approval that still comes
after that is reversed (payments.services.reversals).
"""
from __future__ import annotations

from django.utils import timezone

from payments.services.transitions import payments_expire_batch


def payments_expire_due(*, now=None, batch_size: int = 500, limit: int = 100_000) -> int:
    """Expire every open payment whose deadline has passed; returns how many expired.
    In batches of `batch_size`, each one transaction (payments_expire_batch), so a failure
    undoes one batch only, and sweeps running side by side share the work."""
    now = now or timezone.now()
    expired = 0
    while expired < limit:
        count = payments_expire_batch(now=now, limit=min(batch_size, limit - expired))
        if not count:
            break
        expired += count
    return expired
