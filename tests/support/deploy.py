"""The deployment recipe of deploy/, run on loopback: PgBouncer and HAProxy from the very files an
operator copies, with only their ports and paths replaced, in front of real gunicorn and Celery
processes of this checkout.

    with PgBouncer(database_url_for_tests(), tmp_path) as bouncer:
        bouncer.url                  # postgres://...@127.0.0.1:<port>/gateway, transaction mode

    cluster = Cluster(tmp_path, env={...}).start()   # 2 web nodes, 2 workers (one beat), HAProxy
    cluster.url                                      # https://127.0.0.1:<port>, TLS ended by HAProxy
    cluster.nodes[0].stop() / .start()               # a node leaves and comes back
    cluster.workers[0].kill()                        # SIGKILL a worker (the one with beat)
    cluster.close()

`render()` is the templating: it replaces each given text with its stand-in and fails if the text
is not in the file, so a config that drifts from the harness breaks the tests rather than being
silently run with the operator's ports. Every process is started here in a session of its own
and stopped here by its own pid. Needs Debian's haproxy and pgbouncer (scripts/test installs them).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.spare_redis import free_port
from tests.support.waiting import wait_until
from tests.support.worker import CeleryWorker

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"

__all__ = ["Cluster", "HAProxy", "PgBouncer", "WebNode", "render", "env_file"]


def render(source: Path, replacements: dict[str, str]) -> str:
    """`source`'s text with each key replaced by its value; every key must occur in it."""
    text = source.read_text()
    for old, new in replacements.items():
        if old not in text:
            raise AssertionError(f"{source.relative_to(ROOT)} no longer contains {old!r}: update tests/support/deploy.py")
        text = text.replace(old, new)
    return text


def env_file(path: Path) -> dict[str, str]:
    """KEY=value lines of one of deploy/env/*.env (systemd's EnvironmentFile syntax, the subset we use)."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def _owned_by_postgres(path: Path) -> None:
    """pgbouncer refuses to run as root: it runs as the postgres OS user, which must reach its files."""
    if os.geteuid() == 0:
        shutil.chown(path, "postgres", "postgres")


def _stop_group(process: subprocess.Popen | None, sig=signal.SIGTERM, timeout: float = 15) -> None:
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, sig)
        process.wait(timeout=timeout)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


class PgBouncer:
    """deploy/pgbouncer/pgbouncer.ini in front of the database `database_url` names."""

    def __init__(self, database_url: str, *, pool_size: int | None = None):
        self.server = urlsplit(database_url)
        # Its own folder in /tmp, which the postgres OS user can reach (pytest's tmp_path is root's alone).
        self.folder = Path(tempfile.mkdtemp(prefix="gw-pgbouncer-"))
        self.port = free_port()
        self.pool_size = pool_size
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        s = self.server
        return f"postgres://{s.username}:{s.password}@127.0.0.1:{self.port}/gateway"

    def start(self) -> PgBouncer:
        os.chmod(self.folder, 0o755)
        s = self.server
        replacements = {
            "gateway = host=127.0.0.1 port=5432 dbname=gateway":
                f"gateway = host={s.hostname} port={s.port or 5432} dbname={s.path.lstrip('/')}",
            "listen_port = 6432": f"listen_port = {self.port}",
            "/var/log/postgresql/pgbouncer.log": str(self.folder / "pgbouncer.log"),
            "/var/run/postgresql/pgbouncer.pid": str(self.folder / "pgbouncer.pid"),
            "/etc/pgbouncer/userlist.txt": str(self.folder / "userlist.txt"),
            "stats_users = gateway": f"stats_users = {s.username}",
        }
        if self.pool_size is not None:
            replacements["default_pool_size = 20"] = f"default_pool_size = {self.pool_size}"
        config = self.folder / "pgbouncer.ini"
        config.write_text(render(DEPLOY / "pgbouncer" / "pgbouncer.ini", replacements))
        (self.folder / "userlist.txt").write_text(f'"{s.username}" "{s.password}"\n')
        for path in (config, self.folder / "userlist.txt", self.folder):
            _owned_by_postgres(path)
        os.chmod(self.folder / "userlist.txt", 0o600)
        command = [PGBOUNCER, str(config)]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        wait_until(lambda: self.process.poll() is not None or _accepts(self.port), 15, "pgbouncer did not start")
        if self.process.poll() is not None:
            raise AssertionError("pgbouncer exited:\n" + self.log_text())
        return self

    def log_text(self) -> str:
        path = self.folder / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        _stop_group(self.process, signal.SIGINT)  # SIGINT: PgBouncer's safe shutdown
        self.process = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> PgBouncer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
