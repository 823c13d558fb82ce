"""The Celery app: `celery -A gateway worker`, `celery -A gateway beat`."""
import os
from pathlib import Path

from celery import Celery
from celery.signals import (before_task_publish, task_failure, task_postrun, task_prerun, worker_init,
                            worker_process_shutdown)

from gateway.core import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gateway.settings")


def metrics_folder_prepare() -> None:
    """A worker that serves metrics (METRICS_WORKER_PORT) needs its pool's children to write to a
    multiprocess folder, named before prometheus_client is first imported: unless the operator
    names one, a fresh one under var/ for this worker, emptied (counters start from zero)."""
    if not os.environ.get("METRICS_WORKER_PORT", "").strip("0 ") or os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    folder = Path(__file__).resolve().parent.parent / "var" / "metrics" / f"worker-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.db"):
        old.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)


metrics_folder_prepare()

app = Celery("gateway")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The file-system broker of the quick start needs its folders before the first message.
_options = app.conf.broker_transport_options or {}
for _key in ("data_folder_in", "processed_folder", "control_folder"):
    if _options.get(_key):
        Path(_options[_key]).mkdir(parents=True, exist_ok=True)


# The traceId (and merchant) of the request that queued a task travel with it, so the worker's
# log lines can be matched to the request; a task queued by beat gets a traceId of its own.
@before_task_publish.connect
def _carry_trace_id(headers=None, **kwargs):
    if headers is not None:
        headers.setdefault("traceId", tracing._trace_id.get())
        headers.setdefault("merchant", tracing._merchant.get())


@task_prerun.connect
def _adopt_trace_id(task=None, **kwargs):
    request = getattr(task, "request", None)
    if request is None or request.is_eager:  # runs inside the caller's own context
        return
    tracing.set_trace_id(getattr(request, "traceId", None) or tracing.new_trace_id())
    tracing.set_merchant(getattr(request, "merchant", None) or "")


@task_postrun.connect
def _drop_trace_id(task=None, **kwargs):
    request = getattr(task, "request", None)
    if request is None or request.is_eager:
        return
    tracing.set_trace_id("")
    tracing.set_merchant("")


# Database errors a task met, for /metrics (gateway.core.metrics).
@task_failure.connect
def _count_database_error(exception=None, **kwargs):
    from django.db import DatabaseError

    if isinstance(exception, DatabaseError):
        from gateway.core import metrics

        metrics.database_errors.labels(type(exception).__name__).inc()


# The worker's own /metrics (METRICS_WORKER_PORT): the main process serves the sum of its pool's
# children, which write to the multiprocess folder metrics_folder_prepare made before they forked.
@worker_init.connect
def _metrics_serve(**kwargs):
    from django.conf import settings

    if not settings.METRICS_WORKER_PORT:
        return
    from prometheus_client import CollectorRegistry, multiprocess, start_http_server

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    start_http_server(settings.METRICS_WORKER_PORT, addr=settings.METRICS_WORKER_ADDRESS, registry=registry)


@worker_process_shutdown.connect
def _metrics_child_gone(pid=None, **kwargs):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR") and pid:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
