"""The Celery app: `celery -A gateway worker`, `celery -A gateway beat`."""
import os
from pathlib import Path

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun

from gateway.core import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gateway.settings")

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
