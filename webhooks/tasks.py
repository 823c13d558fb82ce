"""Thin Celery tasks: take ids, call one service. Celery's retry counter is not used; the
delivery rows decide what is due (webhooks.delivery).

`deliveries_queue` is how webhooks.services queues them once a transaction commits; the tasks
hand webhooks.delivery the same function for a failed attempt's soon retry. Nothing this module
imports imports it."""
from celery import shared_task
from django.utils import timezone

from gateway.core.broker import tasks_publish
from gateway.core.metrics import sweep_timed, webhook_deliveries_due
from gateway.platform.services import merchant_previous_webhook_secrets_forget
from webhooks.delivery import BATCH_SIZE, deliveries_attempt_run, deliveries_due_process, delivery_attempt_run
from webhooks.retention import webhook_history_delete_old
from webhooks.selectors import deliveries_due_count


def deliveries_queue(delivery_ids: list[int], countdown: float | None = None) -> None:
    """Queue attempts: one message for one delivery (after `countdown` seconds, a retry's wait),
    one per BATCH_SIZE of many. One bounded attempt, never raising (gateway.core.broker): a
    broker outage only delays the deliveries, the due-deliveries sweep finds them."""
    if len(delivery_ids) == 1:
        messages = [(delivery_attempt, (delivery_ids[0],), countdown)]
    else:
        messages = [(deliveries_attempt, (delivery_ids[i:i + BATCH_SIZE],), countdown)
                    for i in range(0, len(delivery_ids), BATCH_SIZE)]
    ids = ",".join(map(str, delivery_ids[:10])) + ("..." if len(delivery_ids) > 10 else "")
    tasks_publish(messages, what=f"webhook deliveries {ids}", fallback="the due-deliveries sweep will send them")


def _retry_queue(delivery_id: int, countdown: float) -> None:
    """A failed attempt's retry, due in `countdown` seconds: a message of its own."""
    deliveries_queue([delivery_id], countdown)


@shared_task(name="webhooks.tasks.delivery_attempt", ignore_result=True)
def delivery_attempt(delivery_id: int) -> None:
    """One attempt of one delivery, if it is still due; a no-op otherwise (safe to repeat)."""
    delivery_attempt_run(delivery_id, retry_queue=_retry_queue)


@shared_task(name="webhooks.tasks.deliveries_attempt", ignore_result=True)
def deliveries_attempt(delivery_ids: list[int]) -> int:
    """One attempt of each of a batch of deliveries recorded together, sent concurrently; those
    no longer due are skipped (safe to repeat)."""
    return deliveries_attempt_run(delivery_ids, retry_queue=_retry_queue)


@shared_task(name="webhooks.tasks.deliveries_due_sweep", ignore_result=True)
def deliveries_due_sweep() -> int:
    """The beat's safety net: sends whatever a lost message, a broker outage or a dead worker
    left due; then counts what is still due, for the backlog gauge."""
    with sweep_timed("webhook-deliveries-due"):
        sent = deliveries_due_process(retry_queue=_retry_queue)
        webhook_deliveries_due.set(deliveries_due_count(now=timezone.now()))
    return sent


@shared_task(name="webhooks.tasks.webhook_history_purge_task", ignore_result=True)
def webhook_history_purge_task() -> int:
    """Delete webhook history past its retention (webhooks.retention)."""
    with sweep_timed("webhook-history-purge"):
        return webhook_history_delete_old()


@shared_task(name="webhooks.tasks.previous_webhook_secrets_forget", ignore_result=True)
def previous_webhook_secrets_forget() -> int:
    """Wipe rotated-out webhook secrets whose grace period has ended (signing stops at the end
    of the grace by itself; this removes the secret from the database)."""
    return merchant_previous_webhook_secrets_forget()
