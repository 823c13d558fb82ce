"""Django's PostgreSQL backend, less one round trip per request.

With CONN_HEALTH_CHECKS Django sends `SELECT 1` before the first statement of every request
that reuses a connection, so that a connection the server closed meanwhile (a restart, a
failover, an idle timeout) is replaced rather than failing the request. That was a tenth of
what enquiry cost the web process and PostgreSQL (docs/decisions.md, D4).

A server that ends a connection says so on its socket: it sends an error message and closes
it, and the socket becomes readable. A connection at rest between requests has nothing to
read. So the check here is a zero-timeout poll of the socket, and only when something is there
does it fall back to Django's `SELECT 1`, which then fails and makes Django reconnect. A peer
that vanishes without a word (a cable pulled) is caught by neither check until TCP gives up.
"""
from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        try:
            poller = select.poll()
            poller.register(connection.fileno(), select.POLLIN)
            waiting = poller.poll(0)
        except (OSError, ValueError):
            return False
        if not waiting:
            return True
        return super().is_usable()
