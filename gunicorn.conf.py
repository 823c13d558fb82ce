# Read by gunicorn from the directory it starts in: `gunicorn gateway.wsgi:application`.
# The sync worker, woken one at a time per connection (gateway/perf/web_worker.py says why).
worker_class = "gateway.perf.web_worker.SyncWorker"

# The worker timeout: gunicorn's default (30 s) equals the X-Idempotency-Key wait, so a waiting
# request could be killed instead of answered. One value, in the settings, so the start-up check
# that keeps the wait well below it (payments.E001) judges the timeout gunicorn really uses.
# gunicorn has already put the folder it starts in on sys.path when it reads this file.
from gateway.settings import WEB_WORKER_TIMEOUT_SECONDS  # noqa: E402

timeout = WEB_WORKER_TIMEOUT_SECONDS
