"""The Celery app: `celery -A gateway worker`, `celery -A gateway beat`."""
import os
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gateway.settings")

app = Celery("gateway")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The file-system broker of the quick start needs its folders before the first message.
_options = app.conf.broker_transport_options or {}
for _key in ("data_folder_in", "processed_folder"):
    if _options.get(_key):
        Path(_options[_key]).mkdir(parents=True, exist_ok=True)
