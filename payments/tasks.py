"""Thin Celery tasks: take ids, call one service."""
from celery import shared_task

from payments.services.expiry import payments_expire_due
from payments.services.transitions import payment_expire


@shared_task(name="payments.tasks.payment_expire_task", ignore_result=True)
def payment_expire_task(payment_id: int) -> None:
    payment_expire(payment_id=payment_id)


@shared_task(name="payments.tasks.payments_expire_sweep", ignore_result=True)
def payments_expire_sweep() -> int:
    return payments_expire_due()


@shared_task(name="payments.tasks.idempotency_records_cleanup", ignore_result=True)
def idempotency_records_cleanup() -> int:
    from payments.services.idempotency import idempotency_records_delete_expired

    return idempotency_records_delete_expired()
