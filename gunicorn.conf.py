# Read by gunicorn from the directory it starts in: `gunicorn gateway.wsgi:application`.
# The sync worker, woken one at a time per connection (gateway/perf/web_worker.py says why).
worker_class = "gateway.perf.web_worker.SyncWorker"
