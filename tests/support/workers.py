"""Loaded before Django (`-p tests.support.workers` in pyproject's addopts): under pytest-xdist
each worker process gets a Redis database of its own, as pytest-django gives it a test database
of its own (test_<name>_gw1). Tests empty their Redis database (cache.clear()), count rate-limit
windows in it and hold beat locks there, so two workers sharing one would see each other's.

Worker gw0 keeps REDIS_URL's database; worker gwN uses database N-1 (0 to 5 are used by no
scripts/test area)."""
from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and _worker[2:].isdigit() and int(_worker[2:]) > 0 and os.environ.get("REDIS_URL"):
    _parts = urlsplit(os.environ["REDIS_URL"])
    os.environ["REDIS_URL"] = urlunsplit(_parts._replace(path=f"/{int(_worker[2:]) - 1}"))
