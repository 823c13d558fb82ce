"""A private copy of the production stack on loopback, for the benchmark and the fault run.

Everything lives in one temporary folder and on ports of its own, so runs never touch the
machine's shared PostgreSQL (5432) or Redis (6379), which other people's tests use:

- PostgreSQL 15: a fresh cluster (initdb, run as the `postgres` OS user because PostgreSQL
  refuses root), default settings (fsync and synchronous_commit on), port 5441;
- Redis: a child `redis-server` without persistence, port 6391;
- web: gunicorn with sync workers (`gunicorn gateway.wsgi:application`, started in the code's
  folder so that it reads gunicorn.conf.py, as production does), port 8391;
- worker: `celery -A gateway worker`; scheduler: `celery -A gateway beat`.

Every process is started here, in a session of its own, and stopped here by its own pid;
`Stack.close()` (also run at exit and on SIGINT/SIGTERM) stops them all and deletes the folder.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
PG_BIN = Path("/usr/lib/postgresql/15/bin")
SECRET_KEY = "benchmark-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"


def _as_postgres(*cmd: str) -> list[str]:
    """PostgreSQL's tools refuse to run as root: run them as the postgres OS user."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return list(cmd)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return sorted(found)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process (not its children)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Stack:
    def __init__(self, *, name: str = "bench", pg_port: int = 5441, redis_port: int = 6391,
                 web_port: int = 8391, web_workers: int = 4, worker_concurrency: int = 4,
                 env: dict | None = None, keep_logs: Path | None = None, code_dir: Path = ROOT,
                 database_url: str | None = None):
        # An existing database instead of a private cluster (benchmarks/grown.py: a grown
        # database is filled once and measured by several runs); left as it is at close.
        self.external_database_url = database_url
        for port in (redis_port, web_port) if database_url else (pg_port, redis_port, web_port):
            if port_open(port):
                raise RuntimeError(f"port {port} is already in use; is another benchmark running?")
        # The code the processes run: this checkout, or another revision (benchmarks/compare).
        self.code_dir = Path(code_dir)
        self.dir = Path(tempfile.mkdtemp(prefix=f"gw-{name}-"))
        os.chmod(self.dir, 0o755)  # the postgres user must reach its data folder
        self.logs = self.dir / "logs"
        self.logs.mkdir()
        self.keep_logs = keep_logs
        self.pg_port, self.redis_port, self.web_port = pg_port, redis_port, web_port
        self.web_workers, self.worker_concurrency = web_workers, worker_concurrency
        self.extra_env = dict(env or {})
        self.procs: dict[str, subprocess.Popen] = {}
        self._starts: dict[str, int] = {}
        self._log_paths: dict[str, Path] = {}
        self._pg_data = self.dir / "pgdata"
        self._closed = False
        atexit.register(self.close)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)

    # -- environment -----------------------------------------------------------------------
    @property
    def database_url(self) -> str:
        if self.external_database_url:
            return self.external_database_url
        return f"postgres://postgres:postgres@127.0.0.1:{self.pg_port}/gateway"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def env(self) -> dict:
        env = dict(os.environ)
        for name in list(env):
            if name.startswith(("DATABASE_", "REDIS_", "CELERY_", "DJANGO_", "GATEWAY_", "TEST_")):
                del env[name]
        env.update({
            "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "GATEWAY_ENV": "staging",
            "GATEWAY_PUBLIC_URL": self.base_url,
            "DJANGO_SECRET_KEY": SECRET_KEY,
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(self.code_dir),
        })
        env.update({k: str(v) for k, v in self.extra_env.items()})
        return env

    def _spawn(self, name: str, cmd: list[str], *, env: dict | None = None) -> subprocess.Popen:
        # A log file per start, so "ready" is read from this start's log only.
        self._starts[name] = self._starts.get(name, 0) + 1
        path = self.logs / f"{name}-{self._starts[name]}.log"
        self._log_paths[name] = path
        log = open(path, "ab")
        try:
            proc = subprocess.Popen(cmd, cwd=self.code_dir, env=env or self.env(), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            log.close()
        self.procs[name] = proc
        return proc

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self._log_paths.get(name)
        if path is None or not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    # -- PostgreSQL --------------------------------------------------------------------------
    def postgres_init(self) -> None:
        self._pg_data.mkdir()
        shutil.chown(self._pg_data, "postgres", "postgres")
        subprocess.run(_as_postgres(str(PG_BIN / "initdb"), "-D", str(self._pg_data), "-U", "postgres",
                                    "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with open(self._pg_data / "postgresql.auto.conf", "a") as f:
            # Loopback only; defaults otherwise (fsync, synchronous_commit and full_page_writes on).
            f.write(f"listen_addresses = '127.0.0.1'\nport = {self.pg_port}\n"
                    f"unix_socket_directories = '{self._pg_data}'\nmax_connections = 200\n")
        self.postgres_start()
        subprocess.run([str(PG_BIN / "psql"), "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "postgres",
                        "-qc", "CREATE DATABASE gateway"], check=True, env={**os.environ, "PGPASSWORD": "x"})

    def postgres_start(self) -> None:
        subprocess.run(_as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self._pg_data), "-l",
                                    str(self._pg_data / "server.log"), "-w", "-t", "60", "start"),
                       check=True, stdout=subprocess.DEVNULL)

    def postgres_stop(self, mode: str = "fast") -> None:
        """mode "immediate" is a crash: no checkpoint, recovery from WAL on the next start."""
        if (self._pg_data / "postmaster.pid").exists():
            subprocess.run(_as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self._pg_data), "-m", mode,
                                        "-w", "-t", "60", "stop"),
                           check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def postgres_ready(self) -> bool:
        return subprocess.run([str(PG_BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.pg_port), "-q"]
                              ).returncode == 0

    def psql(self, sql: str) -> str:
        where = (["-d", self.external_database_url] if self.external_database_url else
                 ["-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "postgres", "-d", "gateway"])
        out = subprocess.run([str(PG_BIN / "psql"), *where, "-Atqc", sql], check=True, capture_output=True, text=True)
        return out.stdout.strip()

    # -- Redis -------------------------------------------------------------------------------
    def redis_start(self) -> None:
        self._spawn("redis", ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--daemonize", "no",
                              "--dir", str(self.dir)])
        wait_until(lambda: port_open(self.redis_port), 15, "redis")

    def redis_stop(self) -> None:
        self._stop("redis", signal.SIGTERM)

    # -- the gateway's processes -------------------------------------------------------------
    def manage(self, *args: str, capture: bool = True) -> str:
        out = subprocess.run([PYTHON, "manage.py", *args], cwd=self.code_dir, env=self.env(), check=True,
                             capture_output=capture, text=True)
        return out.stdout if capture else ""

    def web_start(self) -> None:
        self._spawn("web", [PYTHON, "-m", "gunicorn", "gateway.wsgi:application",
                            "--bind", f"127.0.0.1:{self.web_port}", "--workers", str(self.web_workers),
                            "--backlog", "2048", "--timeout", "60"])
        wait_until(lambda: self._healthy(), 60, "gunicorn (/healthz)", interval=0.3)

    def _healthy(self) -> bool:
        if self.procs["web"].poll() is not None:
            raise RuntimeError("gunicorn exited:\n" + self.log_tail("web"))
        try:
            with urllib.request.urlopen(self.base_url + "/healthz", timeout=2) as r:
                return r.status == 200
        except Exception:  # noqa: BLE001
            return False

    def web_worker_pids(self) -> list[int]:
        return children(self.procs["web"].pid)

    def worker_start(self, *, wait: bool = True) -> None:
        self._spawn("worker", [PYTHON, "-m", "celery", "-A", "gateway", "worker", "--loglevel", "INFO",
                               "--concurrency", str(self.worker_concurrency), "--pool", "prefork",
                               "--hostname", f"bench-{os.getpid()}@%h"])
        if wait:
            wait_until(lambda: self._log_says("worker", " ready."), 60, "the celery worker", interval=0.2)

    def _log_says(self, name: str, text: str) -> bool:
        proc = self.procs.get(name)
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{name} exited:\n" + self.log_tail(name))
        path = self._log_paths.get(name)
        return path is not None and path.exists() and text in path.read_text(errors="replace")

    def worker_kill(self) -> None:
        """SIGKILL to the worker and its pool children together: no warm shutdown, no acks."""
        self._stop("worker", signal.SIGKILL)

    def beat_start(self) -> None:
        self._spawn("beat", [PYTHON, "-m", "celery", "-A", "gateway", "beat", "--loglevel", "INFO",
                             "--schedule", str(self.dir / "celerybeat-schedule")])

    def _stop(self, name: str, sig=signal.SIGTERM, timeout: float = 20) -> None:
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        if sig != signal.SIGKILL:
            # Leftover children of the group (a pool process that outlived its parent).
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    # -- lifecycle ---------------------------------------------------------------------------
    def up(self, *, web: bool = True, worker: bool = True, beat: bool = True) -> Stack:
        if not self.external_database_url:
            self.postgres_init()
        self.redis_start()
        self.manage("migrate", "--noinput")
        if web:
            self.web_start()
        if worker:
            self.worker_start()
        if beat:
            self.beat_start()
        return self

    def _on_signal(self, signum, frame):
        self.close()
        sys.exit(128 + signum)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for name in ("beat", "worker", "web"):
            self._stop(name, signal.SIGTERM, timeout=10)
        for name in list(self.procs):
            if name != "redis":
                self._stop(name, signal.SIGTERM, timeout=10)
        self.redis_stop()
        self.postgres_stop("fast")
        if self.keep_logs:
            self.keep_logs.mkdir(parents=True, exist_ok=True)
            for path in self.logs.glob("*.log"):
                shutil.copy(path, self.keep_logs / path.name)
            if (self._pg_data / "server.log").exists():
                shutil.copy(self._pg_data / "server.log", self.keep_logs / "postgres.log")
        shutil.rmtree(self.dir, ignore_errors=True)


def load_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])
