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
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.spare_redis import free_port
from tests.support.waiting import wait_until
from tests.support.worker import CeleryWorker, unit_restart_seconds, unit_setting

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


# --- the systemd units: the command lines and environment the harness runs ------------------

def unit_command(unit: str, env: dict[str, str]) -> list[str]:
    """The ExecStart= of deploy/systemd/`unit`, with ${VAR} from `env` and the install paths
    (/opt/gateway/.venv/bin, /var/lib/gateway) replaced by this checkout's; run under `nice`
    when the unit sets Nice=, as systemd runs it."""
    import shlex

    words = shlex.split(unit_setting(unit, "ExecStart"))
    bin_dir = str(Path(sys.executable).parent)
    command = []
    for word in words:
        for name, value in env.items():
            word = word.replace("${" + name + "}", value)
        word = word.replace("/opt/gateway/.venv/bin", bin_dir).replace("/var/lib/gateway", env["GATEWAY_VAR_DIR"])
        word = word.replace("%H", socket.gethostname())
        assert "${" not in word, f"{unit}: {word} names a variable no env file sets"
        command.append(word)
    nice = unit_nice(unit)
    return command if nice is None else ["nice", "-n", str(nice), *command]


def unit_nice(unit: str) -> int | None:
    """The Nice= of deploy/systemd/`unit`, or None when it sets none."""
    value = unit_setting(unit, "Nice")
    return None if value is None else int(value)


def unit_env(*files: str, **overrides: str) -> dict[str, str]:
    """The process environment of a unit: deploy/env/common.env, then its own file, then `overrides`
    (the harness's ports, paths, keys, and staging in place of production's acquirer)."""
    values: dict[str, str] = {}
    for name in ("common.env", *files):
        values.update(env_file(DEPLOY / "env" / name))
    values.update(overrides)
    return {k: v for k, v in values.items() if v is not None}  # None: unset, the setting's default


class Process:
    """One process, in a session of its own, logging to a file.

    Of one of deploy/systemd's `unit`s, it does what the unit's Restart=always says: a process
    that exits by itself is started again after the unit's RestartSec (a Celery worker exits so
    on a broker outage it cannot recover from in-process). Without a unit (a test's Prometheus)
    it is not started again."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], folder: Path, *,
                 unit: str | None = None):
        self.name, self.command, self.env, self.folder = name, command, env, folder
        self.restart_seconds = unit_restart_seconds(unit) if unit else None
        self.process: subprocess.Popen | None = None
        self.runs = 0
        self.restarts = 0  # by the Restart=always stand-in, not by a test
        self._wanted = False
        self._lock = threading.RLock()

    @property
    def log_path(self) -> Path:
        return self.folder / f"{self.name}-{self.runs}.log"

    def start(self) -> Process:
        with self._lock:
            self._spawn()
            self._wanted = True
        threading.Thread(target=self._supervise, args=(self.process,), daemon=True).start()
        return self

    def _spawn(self) -> None:
        self.runs += 1
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("DATABASE_", "REDIS_", "CELERY_", "DJANGO_", "GATEWAY_", "TEST_", "SANDBOX_",
                                     "WEBHOOK_", "REFUND_"))}
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(self.command, cwd=ROOT, env={**base, **self.env, "PYTHONUNBUFFERED": "1"},
                                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True)

    def _supervise(self, process: subprocess.Popen) -> None:
        while True:
            process.wait()
            if self.restart_seconds is None:
                return
            time.sleep(self.restart_seconds)
            with self._lock:
                if not self._wanted or self.process is not process:
                    return  # stopped on purpose, or started again by a test
                self.restarts += 1
                self._spawn()
                process = self.process

    def all_logs(self) -> str:
        return "".join((self.folder / f"{self.name}-{run}.log").read_text(errors="replace")
                       for run in range(1, self.runs + 1) if (self.folder / f"{self.name}-{run}.log").exists())

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, sig=signal.SIGTERM, timeout: float = 40) -> None:
        with self._lock:
            self._wanted = False
            process, self.process = self.process, None
        _stop_group(process, sig, timeout)
        if process is not None and process.poll() is None:
            _stop_group(process, signal.SIGKILL)

    def kill(self) -> None:
        self.stop(signal.SIGKILL)


class WebNode(Process):
    """gateway-web.service on a loopback port."""

    def __init__(self, name: str, env: dict[str, str], folder: Path, *, workers: int):
        self.port = free_port()
        env = {**unit_env("web.env", **env), "WEB_BIND": f"127.0.0.1:{self.port}", "WEB_WORKERS": str(workers)}
        super().__init__(name, unit_command("gateway-web.service", env), env, folder, unit="gateway-web.service")

    def ready(self) -> bool:
        if not self.running:
            raise AssertionError(f"{self.name} exited:\n{self.log_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/livez", timeout=2) as answer:
                return answer.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def start(self) -> WebNode:
        super().start()
        wait_until(self.ready, 60, lambda: f"{self.name} did not answer /livez:\n{self.log_text()[-3000:]}",
                   interval=0.2)
        return self


class HAProxy:
    """deploy/haproxy/haproxy.cfg in front of `nodes`, with a certificate of its own for 127.0.0.1."""

    def __init__(self, nodes: list[WebNode], folder: Path, *, maxconn: int):
        self.nodes, self.folder, self.maxconn = nodes, folder / "haproxy", maxconn
        self.https_port, self.http_port, self.stats_port = free_port(), free_port(), free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    @property
    def certificate(self) -> Path:
        return self.folder / "cert.pem"

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.certificate))

    def start(self) -> HAProxy:
        self.folder.mkdir(parents=True, exist_ok=True)
        key = self.folder / "key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                        "-out", str(self.certificate)], check=True, capture_output=True)
        (self.folder / "gateway.pem").write_bytes(self.certificate.read_bytes() + key.read_bytes())
        replacements = {
            "log /dev/log local0": "log stdout format raw local0",
            "chroot /var/lib/haproxy": f"chroot {self.folder}",
            "/run/haproxy/admin.sock": str(self.folder / "admin.sock"),
            "bind :80\n": f"bind 127.0.0.1:{self.http_port}\n",
            "bind :443 ": f"bind 127.0.0.1:{self.https_port} ",
            "/etc/haproxy/certs/gateway.pem": str(self.folder / "gateway.pem"),
            "bind 127.0.0.1:8404": f"bind 127.0.0.1:{self.stats_port}",
            "maxconn 8\n": f"maxconn {self.maxconn}\n",
            "server web1 10.0.0.11:8000 check": f"server web1 127.0.0.1:{self.nodes[0].port} check",
            "server web2 10.0.0.12:8000 check": f"server web2 127.0.0.1:{self.nodes[1].port} check",
        }
        config = self.folder / "haproxy.cfg"
        config.write_text(render(DEPLOY / "haproxy" / "haproxy.cfg", replacements))
        subprocess.run([HAPROXY, "-c", "-q", "-f", str(config)], check=True, capture_output=True)
        with open(self.folder / "haproxy.log", "wb") as log:
            # -db: in the foreground, whatever the file's `daemon` says.
            self.process = subprocess.Popen([HAPROXY, "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        wait_until(lambda: self.process.poll() is not None or _accepts(self.https_port), 15, "haproxy did not start")
        if self.process.poll() is not None:
            raise AssertionError("haproxy exited:\n" + self.log_text())
        return self

    def log_text(self) -> str:
        path = self.folder / "haproxy.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def server_states(self) -> dict[str, str]:
        """{"web1": "UP", "web2": "DOWN", ...} from HAProxy's own statistics page."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.stats_port}/stats;csv", timeout=5) as answer:
            lines = answer.read().decode().splitlines()
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","))) for line in lines[1:] if line]
        return {row["svname"]: row["status"] for row in rows if row["pxname"] == "web" and row["svname"].startswith("web")}

    def admin(self, command: str) -> str:
        """One command on HAProxy's admin socket (what `socat stdio /run/haproxy/admin.sock` does)."""
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(5)
            conn.connect(str(self.folder / "admin.sock"))
            conn.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def sessions(self, server: str) -> int:
        """Requests a server is serving now (scur), from HAProxy's statistics."""
        for line in self.admin("show stat").splitlines():
            cols = line.split(",")
            if len(cols) > 4 and cols[0] == "web" and cols[1] == server:
                return int(cols[4] or 0)
        raise AssertionError(f"no server {server} in HAProxy's statistics")

    def stop(self) -> None:
        _stop_group(self.process, signal.SIGUSR1)  # soft stop: finish what is in flight
        self.process = None


class Cluster:
    """Two web nodes and two workers, exactly one beat, behind deploy/'s HAProxy and PgBouncer.

    `Cluster.running` holds every cluster started and not yet closed: its beat and workers sweep
    the database they serve (expiry, deliveries, UPI approvals), so a cluster left running past
    tests/deploy would act on other tests' rows (tests/conftest.py refuses that).

    `database_url` is the database to serve (the test database, reached through PgBouncer);
    `redis_url` the broker and cache; `env` the settings a test wants beside the env files'
    (sandbox delays, retry schedules). Sizes are small for a shared 2-core machine: 2 gunicorn
    workers per node, Celery concurrency 2."""

    def __init__(self, database_url: str, redis_url: str, *, encryption_keys: str | None = None,
                 env: dict[str, str] | None = None,
                 web_workers: int = 2, worker_concurrency: int = 2):
        self.folder = Path(tempfile.mkdtemp(prefix="gw-cluster-"))
        os.chmod(self.folder, 0o755)
        self.bouncer = PgBouncer(database_url)
        self.redis_url = redis_url
        self.web_workers = web_workers
        self.worker_concurrency = worker_concurrency
        self.https_port = free_port()
        # What the env files leave to the operator, filled in for loopback: staging's sandbox
        # acquirer in place of production's, the keys the test process encrypts merchants' secrets
        # with (None: the development key, as a process without the variable has).
        self.overrides = {
            "GATEWAY_ENV": "staging", "GATEWAY_ACQUIRER": "sandbox", "CASHFREE_CLIENT_ID": "",
            "CASHFREE_CLIENT_SECRET": "", "GATEWAY_ENCRYPTION_KEYS": encryption_keys,
            "DJANGO_SECRET_KEY": "two-node-harness-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
            "REDIS_URL": redis_url, "DATABASE_URL": self.bouncer.url,
            "GATEWAY_PUBLIC_URL": f"https://127.0.0.1:{self.https_port}",
            "GATEWAY_VAR_DIR": str(self.folder / "var"), "BEAT_LOCK_SECONDS": "3", **(env or {}),
        }
        self.nodes: list[WebNode] = []
        self.workers: list[Process] = []
        self.beat: Process | None = None
        self.balancer: HAProxy | None = None

    running: set[Cluster] = set()

    def start(self) -> Cluster:
        Cluster.running.add(self)
        (self.folder / "var").mkdir()
        self.bouncer.start()
        self.nodes = [WebNode(f"web{i}", self.overrides, self.folder, workers=self.web_workers).start() for i in (1, 2)]
        self.balancer = HAProxy(self.nodes, self.folder, maxconn=self.web_workers)
        self.balancer.https_port = self.https_port
        self.balancer.start()
        worker_env = unit_env("worker.env", **self.overrides, WORKER_CONCURRENCY=str(self.worker_concurrency))
        self.worker_metrics_ports = []
        for i in (1, 2):
            # Each worker serves its metrics on a port of its own (METRICS_WORKER_PORT, one per host in deploy/).
            self.worker_metrics_ports.append(free_port())
            env_i = {**worker_env, "METRICS_WORKER_PORT": str(self.worker_metrics_ports[-1])}
            command = unit_command("gateway-worker.service", env_i)
            # Two workers on one machine need two names (systemd's %H is each node's host name).
            command = [w.replace("worker@", f"worker{i}@") for w in command]
            worker = Process(f"worker{i}", command, env_i, self.folder, unit="gateway-worker.service")
            self.workers.append(worker.start())
        beat_env = unit_env("beat.env", **self.overrides)
        self.beat = Process("beat", unit_command("gateway-beat.service", beat_env), beat_env, self.folder,
                            unit="gateway-beat.service").start()
        for worker in self.workers:
            wait_until(lambda: " ready." in worker.log_text() or not worker.running, 60,
                       lambda: f"{worker.name} not ready:\n{worker.log_text()[-3000:]}")
            assert worker.running, worker.log_text()[-3000:]
        wait_until(lambda: set(self.balancer.server_states().values()) == {"UP"}, 30,
                   lambda: f"HAProxy's servers are not all up: {self.balancer.server_states()}")
        return self

    @property
    def url(self) -> str:
        return self.balancer.url

    def rolling_restart(self, index: int) -> None:
        """Restart web node `index` (0 or 1) as docs/operations.md says an upgrade does: out of the
        balancer's pool first (maint: no new requests), its requests in flight finished, stopped
        (SIGTERM), started, back in the pool, and UP before this returns."""
        node, server = self.nodes[index], f"web{index + 1}"
        self.balancer.admin(f"set server web/{server} state maint")
        wait_until(lambda: self.balancer.sessions(server) == 0, 60, f"{server} kept its requests")
        node.stop()
        node.start()
        self.balancer.admin(f"set server web/{server} state ready")
        wait_until(lambda: self.balancer.server_states().get(server) == "UP", 60,
                   lambda: f"{server} did not come back into the pool: {self.balancer.server_states()}")

    def broker_connections(self) -> list[int]:
        """How often each worker has connected to the broker so far (its log says so each time)."""
        return [worker.all_logs().count("Connected to redis") for worker in self.workers]

    def wait_broker_reconnected(self, before: list[int]) -> None:
        wait_until(lambda: all(now > then for now, then in zip(self.broker_connections(), before)), 60,
                   lambda: "a worker did not reconnect to the broker:\n" + self.logs())

    def logs(self, tail: int = 3000) -> str:
        parts = [f"--- {p.name}\n{p.log_text()[-tail:]}" for p in (*self.nodes, *self.workers, self.beat) if p]
        if self.balancer:
            parts.append(f"--- haproxy\n{self.balancer.log_text()[-tail:]}")
        return "\n".join(parts)

    def close(self, keep_logs: Path | None = None) -> None:
        """Stop everything; copy every log to `keep_logs` first when given (for a failed run)."""
        if self.balancer:
            self.balancer.stop()
        for process in (self.beat, *self.workers, *self.nodes):
            if process is not None:
                process.stop(timeout=20)
        if keep_logs is not None:
            keep_logs.mkdir(parents=True, exist_ok=True)
            for path in [*self.folder.glob("*.log"), *self.folder.glob("haproxy/*.log")]:
                shutil.copy(path, keep_logs / path.name)
            if (self.bouncer.folder / "pgbouncer.log").exists():
                shutil.copy(self.bouncer.folder / "pgbouncer.log", keep_logs / "pgbouncer.log")
        self.bouncer.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
        Cluster.running.discard(self)

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc) -> None:
        self.close()
