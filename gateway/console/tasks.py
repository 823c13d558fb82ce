"""Thin Celery tasks of the console: call one function."""
from celery import shared_task

from gateway.core.metrics import sweep_timed


@shared_task(name="gateway.console.tasks.dashboard_buckets_fold_task", ignore_result=True)
def dashboard_buckets_fold_task() -> int:
    """Fold the dashboard's closed five-minute buckets of payments (gateway.console.buckets)."""
    from gateway.console.buckets import dashboard_buckets_fold

    with sweep_timed("dashboard-fold"):
        return dashboard_buckets_fold()
