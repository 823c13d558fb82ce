import os
from pathlib import Path

# Read by gunicorn from the directory it starts in: `gunicorn gateway.wsgi:application`.
# The sync worker, woken one at a time per connection (gateway/perf/web_worker.py says why).
worker_class = "gateway.perf.web_worker.SyncWorker"

# /metrics adds up every worker's values through prometheus_client's multiprocess mode: each
# process writes its values to files in PROMETHEUS_MULTIPROC_DIR. Unless the operator names the
# folder, each master gets one of its own under var/ (two masters on one host never share one),
# emptied at start so that a restart begins from zero, as Prometheus expects of counters.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(Path(__file__).resolve().parent / "var" / "metrics" / f"web-{os.getpid()}")
_metrics_dir = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
_metrics_dir.mkdir(parents=True, exist_ok=True)
for _old in _metrics_dir.glob("*.db"):  # only the client's own files, whatever else the folder holds
    _old.unlink()


# The worker timeout: gunicorn's default (30 s) equals the X-Idempotency-Key wait, so a waiting
# request could be killed instead of answered. One value, in the settings, so the start-up check
# that keeps the wait well below it (payments.E001) judges the timeout gunicorn really uses.
# gunicorn has already put the folder it starts in on sys.path when it reads this file.
from gateway.settings import WEB_WORKER_TIMEOUT_SECONDS  # noqa: E402

timeout = WEB_WORKER_TIMEOUT_SECONDS


def child_exit(server, worker):
    # A dead worker's live gauges stop counting; its counters and histograms stay in the sum.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
