"""The quick start's embedded defaults (SQLite, the file-system broker) write only under var/
and let the web process and the worker write at the same time."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, *, cwd: Path, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("GATEWAY_", "DJANGO_", "DATABASE_", "REDIS_", "CELERY_"))}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**base, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "gateway.settings",
                               **env})


def test_a_worker_on_the_file_system_broker_leaves_no_control_folder_behind(tmp_path):
    # A worker listens for remote-control broadcasts; kombu's file-system transport keeps their
    # exchange tables in `control/`, relative to the directory the process started in: the
    # quick start's worker left one in the repository root.
    result = run_python(
        "import django; django.setup()\n"
        "from gateway.celery import app\n"
        "with app.connection_for_write() as conn:\n"
        "    node = app.control.mailbox(conn).Node('quickstart@test', channel=conn.default_channel)\n"
        "    node.listen().cancel()\n",
        cwd=tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "control").exists()
    assert (ROOT / "var" / "celery" / "control").is_dir()


CONCURRENT_WRITERS = """
import threading
import django
django.setup()
from django.db import connection, transaction

with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE IF NOT EXISTS counter (n integer)")
    cursor.execute("PRAGMA journal_mode")
    print("journal_mode", cursor.fetchone()[0])
connection.close()
errors = []

def writer():
    from django.db import connection
    try:
        for _ in range(40):
            # Read, then write, in one transaction: what every row-locking service does.
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM counter")
                cursor.execute("INSERT INTO counter VALUES (%s)", [cursor.fetchone()[0]])
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()

threads = [threading.Thread(target=writer) for _ in range(6)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
with connection.cursor() as cursor:
    cursor.execute("SELECT count(*) FROM counter")
    print("rows", cursor.fetchone()[0])
print("errors", errors)
"""


def test_sqlite_concurrent_writers_wait_their_turn_instead_of_failing(tmp_path):
    result = run_python(CONCURRENT_WRITERS, cwd=tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "journal_mode wal" in lines
    assert "errors []" in lines, result.stdout
    assert "rows 240" in lines


def test_postgresql_settings_are_not_given_the_sqlite_options():
    result = run_python(
        "from django.conf import settings\n"
        "options = settings.DATABASES['default'].get('OPTIONS', {})\n"
        "print(sorted(options))\n",
        cwd=ROOT, DATABASE_URL="postgres://u:p@127.0.0.1:5432/x")
    assert result.returncode == 0, result.stderr
    assert "transaction_mode" not in result.stdout and "init_command" not in result.stdout


def _read_all(folder: str, count: int, out) -> None:
    """A worker's side: take `count` messages off the folder as fast as they come; report how
    many came whole and how many could not be read."""
    import time as clock
    from queue import Empty

    from kombu import Connection

    from gateway.core.filebroker import Transport

    channel = Connection(transport=Transport, transport_options={
        "data_folder_in": folder, "data_folder_out": folder, "store_processed": False}).default_channel
    whole = broken = 0
    deadline = clock.monotonic() + 60
    while whole + broken < count and clock.monotonic() < deadline:
        try:
            whole += channel._get("celery")["i"] >= 0
        except Empty:
            pass
        except Exception:  # noqa: BLE001 - a message read half-written, whatever it raises
            broken += 1
    out.put((whole, broken))


def test_the_worker_never_takes_a_message_before_it_is_written_whole(tmp_path):
    # kombu's own transport wrote each message under its final name: a worker polling the folder
    # took it half-written and stopped for good (JSONDecodeError), and the quick start sent no
    # more webhooks. Large messages make the writing slow enough to be caught every time: with
    # kombu's _put this read 0 of 30 whole.
    import multiprocessing

    from kombu import Connection

    from gateway.core.filebroker import Transport

    folder = str(tmp_path)
    out = multiprocessing.get_context("fork").Queue()
    reader = multiprocessing.get_context("fork").Process(target=_read_all, args=(folder, 30, out))
    reader.start()
    channel = Connection(transport=Transport, transport_options={
        "data_folder_in": folder, "data_folder_out": folder, "store_processed": False}).default_channel
    for i in range(30):
        channel._put("celery", {"i": i, "body": "x" * 2_000_000})
    reader.join(90)
    assert out.get(timeout=5) == (30, 0)
    assert not list(tmp_path.iterdir())  # nothing left half-written either


def test_the_quick_starts_broker_is_the_one_that_writes_messages_whole(tmp_path):
    result = run_python("import django; django.setup()\n"
                        "from gateway.celery import app\n"
                        "print(type(app.connection_for_write().transport).__module__)\n",
                        cwd=tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "gateway.core.filebroker"
