"""Thin Celery tasks of the gateway app: call one service."""
from celery import shared_task

from gateway.core.metrics import sweep_timed


@shared_task(name="gateway.tasks.gateway_retention_task", ignore_result=True)
def gateway_retention_task() -> int:
    """Delete expired sessions and audit records past their retention (gateway.platform.retention)."""
    from gateway.platform.retention import audit_records_delete_old, sessions_delete_expired

    with sweep_timed("gateway-retention"):
        return sessions_delete_expired() + audit_records_delete_old()
