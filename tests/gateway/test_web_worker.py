"""gateway.perf.web_worker: a connection on the shared listening socket wakes one waiting worker."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gateway.perf.web_worker import EXCLUSIVE, ExclusiveWait

ROOT = Path(__file__).resolve().parents[2]
# EPOLLEXCLUSIVE is Linux 4.5+. The gunicorn.conf.py test runs everywhere.
needs_epoll_exclusive = pytest.mark.skipif(
    EXCLUSIVE is None, reason="no Linux epoll with EPOLLEXCLUSIVE here: the worker falls back to gunicorn's own "
                              "select() wait, which has nothing of ours to test")


def _woken_by_one_connection(waiters: int, make_wait) -> int:
    """How many of `waiters` threads, each waiting on the same listening socket, wake up when
    one client connects (and nobody accepts)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    woken = []
    ready = threading.Barrier(waiters + 1)

    def wait():
        waiter = make_wait(listener)
        ready.wait()
        if waiter(2.0):
            woken.append(1)

    threads = [threading.Thread(target=wait) for _ in range(waiters)]
    for thread in threads:
        thread.start()
    ready.wait()
    time.sleep(0.5)  # all of them inside their wait
    client = socket.create_connection(listener.getsockname())
    for thread in threads:
        thread.join()
    client.close()
    listener.close()
    return len(woken)


@needs_epoll_exclusive
def test_a_connection_wakes_one_exclusive_waiter_where_select_wakes_them_all():
    import select

    exclusive = _woken_by_one_connection(4, lambda listener: ExclusiveWait([listener]).wait)
    everyone = _woken_by_one_connection(4, lambda listener: lambda t: select.select([listener], [], [], t)[0])
    assert (exclusive, everyone) == (1, 4)


@needs_epoll_exclusive
def test_a_private_descriptor_wakes_its_waiter_and_comes_back_as_given():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    read_end, write_end = os.pipe()
    waiter = ExclusiveWait([listener], [read_end])
    assert waiter.wait(0.05) == []
    os.write(write_end, b".")
    assert waiter.wait(1.0) == [read_end]
    waiter.close()
    listener.close()
    os.close(read_end)
    os.close(write_end)


def test_gunicorn_started_in_the_project_folder_uses_it():
    """gunicorn.conf.py is read from the folder gunicorn starts in, as production starts it."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    web = subprocess.Popen([sys.executable, "-m", "gunicorn", "gateway.wsgi:application", "--bind",
                            f"127.0.0.1:{port}", "--workers", "1"], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        deadline, seen = time.monotonic() + 30, ""
        while "Using worker" not in seen and time.monotonic() < deadline:
            seen += web.stdout.readline()
        assert "Using worker: gateway.perf.web_worker.SyncWorker" in seen, seen
    finally:
        web.terminate()
        web.wait(20)
