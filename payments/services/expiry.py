"""Expiry: a task per payment at its deadline, and a sweep as the safety net."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from payments.models import Payment
from payments.services.transitions import payments_expire_batch


def payment_schedule_expiry(payment: Payment) -> None:
    """After the surrounding transaction commits, queue the expiry for `payment.expires_at`.
    A lost message only delays expiry until the next sweep."""
    from payments.tasks import payment_expire_task

    payment_id, eta = payment.pk, payment.expires_at
    transaction.on_commit(lambda: _send_quietly(payment_expire_task, payment_id, eta))


def _send_quietly(task, payment_id, eta) -> None:
    try:
        task.apply_async(args=[payment_id], eta=eta)
    except Exception:  # the broker is down: the sweep will expire it
        import logging

        logging.getLogger("payments.expiry").warning("could not queue expiry of payment %s", payment_id)


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
