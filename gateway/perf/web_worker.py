"""gunicorn's sync worker, woken one at a time (gunicorn.conf.py makes it the web's worker).

gunicorn's sync workers wait for a connection with select() on the shared listening socket,
and select() wakes every waiting worker for each connection: one accepts it, the others find
nothing (EAGAIN), touch their heartbeat file and wait again. Measured on 2 cores with 4
workers, that made a bare request cost 0.82 ms of CPU at 659 requests/s against 0.46 ms with
one worker, so at half the maximum rate the server was already near full, and its latency
tail long. Here each worker waits on its own epoll with EPOLLEXCLUSIVE on the listener
(Linux 4.5+), so the kernel wakes one idle worker per connection. Everything else, one
request at a time per process included, is gunicorn's sync worker unchanged. Where epoll or
EPOLLEXCLUSIVE is missing, it waits with select() as gunicorn does.
"""
from __future__ import annotations

import errno
import os
import select

from gunicorn.workers.sync import StopWaiting
from gunicorn.workers.sync import SyncWorker as GunicornSyncWorker

EXCLUSIVE = getattr(select, "EPOLLEXCLUSIVE", None)


class ExclusiveWait:
    """Waits until one of `listeners` (shared with other processes, each waiting with its own
    ExclusiveWait) or `private` (file descriptors of this process alone) is readable. A
    connection on a listener wakes one of the waiters, not all of them."""

    def __init__(self, listeners, private=()):
        self._epoll = select.epoll()
        self._by_fd = {}
        for item in listeners:
            self._register(item, select.EPOLLIN | EXCLUSIVE)
        for item in private:
            self._register(item, select.EPOLLIN)

    def _register(self, item, events: int) -> None:
        fd = item if isinstance(item, int) else item.fileno()
        self._epoll.register(fd, events)
        self._by_fd[fd] = item

    def wait(self, timeout: float | None) -> list:
        """The readable listeners and private descriptors, as they were given; [] on timeout."""
        return [self._by_fd[fd] for fd, _ in self._epoll.poll(-1 if timeout is None else timeout)]

    def close(self) -> None:
        self._epoll.close()


class SyncWorker(GunicornSyncWorker):
    """gunicorn's SyncWorker whose wait() uses ExclusiveWait instead of select()."""

    _waiter: ExclusiveWait | None = None

    def wait(self, timeout):
        if EXCLUSIVE is None:
            return super().wait(timeout)
        try:
            if self._waiter is None:
                self._waiter = ExclusiveWait(self.sockets, [self.PIPE[0]])
            self.notify()
            ready = self._waiter.wait(timeout)
            if self.PIPE[0] in ready:
                os.read(self.PIPE[0], 1)
            return ready
        except OSError as e:  # as gunicorn's wait(): the listeners closed under us at shutdown
            if e.args[0] == errno.EBADF:
                if self.nr < 0:
                    return self.sockets
                raise StopWaiting from None
            raise
