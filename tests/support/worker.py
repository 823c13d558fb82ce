"""A real `celery -A gateway worker` subprocess on the test database, for end-to-end tests.

Use it from a test that commits (the `transactional_db` or `live_server` fixtures): the worker
is another process and sees only committed rows.

    def test_something(transactional_db, tmp_path):
        with CeleryWorker(beat=True, env={"WEBHOOK_RETRY_SCHEDULE": "1,1,1"}, log_dir=tmp_path) as worker:
            ...                      # tasks queued by this process run in the worker
            worker.kill()            # SIGKILL, mid-task if you like
            worker.start()           # a fresh worker, same settings

- The database is the test database this process is using (read from the live connection);
  the broker is this process's REDIS_URL unless `redis_url` says otherwise.
- `beat=True` embeds the scheduler (`-B`), with its schedule file in a temporary folder.
- `settings={"NAME": value}` overrides Django settings in the worker, for the ones that are
  not read from the environment (it writes a small settings module that star-imports
  gateway.settings into the worker's temporary folder); `env` sets environment variables.
- `purge=True` (default) drops messages left in the broker by earlier runs before starting.
- `start()` returns once the worker logs that it is ready; the log is `worker.log_text()`,
  and it is appended to the AssertionError when the worker fails to come up.
- `kill()` sends SIGKILL to the worker and its pool children; `stop()` asks for a warm
  shutdown and falls back to SIGKILL. Leaving the `with` block stops it.
- `restart=True` starts the worker again RESTART_SECONDS after it exits on its own, as the
  shipped unit does (`Restart=always` and its `RestartSec` in
  deploy/systemd/gateway-worker.service); `restarts` counts how often. kill() and stop() are
  not exits on its own.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]


def unit_setting(unit: str, name: str) -> str | None:
    """The value of `name`= in deploy/systemd/`unit`, or None when the unit does not set it."""
    match = re.search(rf"^{name}=(.*)$", (ROOT / "deploy" / "systemd" / unit).read_text(), re.MULTILINE)
    return match.group(1).strip() if match else None


def unit_restart_seconds(unit: str) -> float:
    """The RestartSec= of deploy/systemd/`unit`: how long systemd waits before it starts again a
    process that exited (Restart=always). The harnesses wait as long (tests/support/deploy.py too)."""
    return float(unit_setting(unit, "RestartSec"))


# How long the shipped unit waits before it starts a worker that exited (restart=True does the same).
RESTART_SECONDS = unit_restart_seconds("gateway-worker.service")

__all__ = ["CeleryWorker", "database_url_for_tests"]


def database_url_for_tests() -> str:
    """postgres://... of the database this test process is connected to (the test database)."""
    from django.db import connection

    s = connection.settings_dict
    user = quote(s.get("USER") or "", safe="")
    password = quote(s.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = s.get("HOST") or "127.0.0.1"
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{s['NAME']}"


class CeleryWorker:
    def __init__(self, *, beat: bool = False, concurrency: int = 2, env: dict | None = None,
                 settings: dict | None = None, redis_url: str | None = None, purge: bool = True, loglevel: str = "INFO",
                 log_dir: str | os.PathLike | None = None, ready_timeout: float = 45.0, restart: bool = False):
        self.beat = beat
        self.concurrency = concurrency
        self.extra_env = dict(env or {})
        self.settings = dict(settings or {})
        self.redis_url = redis_url
        self.purge = purge
        self.loglevel = loglevel
        self.ready_timeout = ready_timeout
        self._dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="celery-worker-"))
        self._dir.mkdir(parents=True, exist_ok=True)
        self._process: subprocess.Popen | None = None
        self._log_path: Path | None = None
        self._runs = 0
        self.restart = restart
        self.restarts = 0
        self._lock = threading.Lock()
        self._wanted = False  # True between start() and kill()/stop(): an exit then is the worker's own

    # lifecycle -----------------------------------------------------------------------------
    def environment(self) -> dict:
        env = dict(os.environ)
        env.update({
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            "DATABASE_URL": database_url_for_tests(),
            "GATEWAY_ENV": env.get("GATEWAY_ENV", "staging"),
            "PYTHONUNBUFFERED": "1",
            # A worker a test killed leaves the beat lock behind (gateway/core/beatlock.py): the
            # next one's beat takes over 3 s later rather than 15.
            "BEAT_LOCK_SECONDS": env.get("BEAT_LOCK_SECONDS", "3"),
        })
        redis_url = self.redis_url or os.environ.get("REDIS_URL")
        if redis_url:
            env["REDIS_URL"] = redis_url
        if self.settings:
            module = self._dir / "worker_settings_override.py"
            module.write_text("from gateway.settings import *  # noqa: F401,F403\n" + "".join(
                f"{name} = {value!r}\n" for name, value in self.settings.items()))
            env["DJANGO_SETTINGS_MODULE"] = module.stem
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self._dir), env.get("PYTHONPATH", "")) if p)
        env.update({k: str(v) for k, v in self.extra_env.items()})
        return env

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "celery", "-A", "gateway", "worker",
               "--loglevel", self.loglevel, "--concurrency", str(self.concurrency), "--pool", "prefork",
               "--hostname", f"test-{uuid.uuid4().hex[:8]}@%h",
               "--without-gossip", "--without-mingle", "--without-heartbeat"]
        if self.purge and self._runs == 0:
            cmd.append("--purge")
        if self.beat:
            cmd += ["--beat", "--schedule", str(self._dir / f"beat-schedule-{self._runs}")]
        return cmd

    def start(self) -> CeleryWorker:
        assert not self.running, "the worker is already running"
        with self._lock:
            self._spawn()
            self._wanted = True
        if self.restart:
            threading.Thread(target=self._supervise, args=(self._process,), daemon=True).start()
        self._wait_ready()
        return self

    def _spawn(self) -> None:
        self._log_path = self._dir / f"worker-{self._runs}.log"
        log = open(self._log_path, "wb")
        try:
            # A session of its own, so kill() reaches the pool children and nothing else.
            self._process = subprocess.Popen(self.command(), cwd=ROOT, env=self.environment(),
                                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        self._runs += 1

    def _supervise(self, process: subprocess.Popen) -> None:
        # What systemd does for Restart=always: the worker exited while it was wanted, so after
        # RestartSec a new one starts. One thread per start(); it ends when the worker is let go.
        while True:
            process.wait()
            time.sleep(RESTART_SECONDS)
            with self._lock:
                if not self._wanted or self._process is not process:
                    return
                self._spawn()
                self.restarts += 1
                process = self._process

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise AssertionError(f"celery worker exited with {self._process.returncode}:\n{self.log_text()}")
            text = self.log_text()
            if " ready." in text and (not self.beat or "beat: Starting" in text):
                return
            time.sleep(0.1)
        self.kill()
        raise AssertionError(f"celery worker not ready within {self.ready_timeout} s:\n{self.log_text()}")

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes at once: no shutdown, no acks."""
        with self._lock:
            self._wanted = False
        if self._process is None:
            return
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._process.wait(timeout=10)
        self._process = None

    def stop(self, timeout: float = 15.0) -> None:
        """Warm shutdown (SIGTERM): running tasks finish; SIGKILL after `timeout`."""
        with self._lock:
            self._wanted = False
        if self._process is None:
            return
        if self._process.poll() is None:
            try:
                # The main process only: it lets the pool children finish their tasks.
                self._process.send_signal(signal.SIGTERM)
                self._process.wait(timeout=timeout)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def __enter__(self) -> CeleryWorker:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # observation ---------------------------------------------------------------------------
    def log_text(self) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_text(errors="replace")
