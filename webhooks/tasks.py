"""Thin Celery tasks: take ids, call one service. Celery's retry counter is not used; the
delivery rows decide what is due (webhooks.services)."""
from celery import shared_task

from gateway.platform.services import merchant_previous_webhook_secrets_forget
from webhooks import services


@shared_task(name="webhooks.tasks.delivery_attempt", ignore_result=True)
def delivery_attempt(delivery_id: int) -> None:
    """One attempt of one delivery, if it is still due; a no-op otherwise (safe to repeat)."""
    services.delivery_attempt_run(delivery_id)


@shared_task(name="webhooks.tasks.deliveries_attempt", ignore_result=True)
def deliveries_attempt(delivery_ids: list[int]) -> int:
    """One attempt of each of a batch of deliveries recorded together, sent concurrently; those
    no longer due are skipped (safe to repeat)."""
    return services.deliveries_attempt_run(delivery_ids)


@shared_task(name="webhooks.tasks.deliveries_due_sweep", ignore_result=True)
def deliveries_due_sweep() -> int:
    """The beat's safety net: sends whatever a lost message, a broker outage or a dead worker
    left due."""
    return services.deliveries_due_process()


@shared_task(name="webhooks.tasks.webhook_history_purge_task", ignore_result=True)
def webhook_history_purge_task() -> int:
    """Delete webhook history past its retention (webhooks.retention)."""
    from webhooks.retention import webhook_history_delete_old

    return webhook_history_delete_old()


@shared_task(name="webhooks.tasks.previous_webhook_secrets_forget", ignore_result=True)
def previous_webhook_secrets_forget() -> int:
    """Wipe rotated-out webhook secrets whose grace period has ended (signing stops at the end
    of the grace by itself; this removes the secret from the database)."""
    return merchant_previous_webhook_secrets_forget()
