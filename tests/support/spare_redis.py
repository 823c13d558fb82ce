"""A redis-server of a test's own on a spare loopback port, to stop, hang and kill at will (the
machine's Redis on 6379 is shared and never touched).

    redis = SpareRedis().start()
    redis.url            # redis://127.0.0.1:<port>/0
    redis.pause()        # SIGSTOP: it keeps accepting connections and answers nothing
    redis.resume()       # SIGCONT
    redis.kill()         # SIGKILL: everything it held is gone (it keeps nothing on disk)
    redis.start()        # a fresh, empty one on the same port
    redis.stop()
"""
from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time

__all__ = ["SpareRedis", "free_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


class SpareRedis:
    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> SpareRedis:
        self.process = subprocess.Popen(
            [shutil.which("redis-server"), "--bind", "127.0.0.1", "--port", str(self.port),
             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while not _accepts(self.port):
            assert time.monotonic() < deadline, "spare redis-server did not start"
            time.sleep(0.05)
        return self

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
            self.process.terminate()
            self.process.wait(10)
            self.process = None
