"""Ending a database call that hangs, from another thread: a server that stopped answering
(SIGSTOP, a frozen VM) ignores its own statement timeouts, and the kernel still answers TCP
keepalives for it, so the only way out is to shut the connection's socket down (psycopg) or
to interrupt it (sqlite3). The connections come from ``Store.on_pool``."""

from __future__ import annotations

import contextlib
import os
import socket
from typing import Any


def interrupt(dbapi_conn: Any) -> None:
    """Make a call blocked on this DBAPI connection fail at once (any driver error it raises
    is the caller's to see; the connection is unusable afterwards on PostgreSQL)."""
    pgconn = getattr(dbapi_conn, "pgconn", None)
    if pgconn is not None:  # psycopg: shut the socket down under it
        dup = socket.socket(fileno=os.dup(pgconn.socket))
        with contextlib.suppress(OSError):
            dup.shutdown(socket.SHUT_RDWR)
        dup.close()
    elif hasattr(dbapi_conn, "interrupt"):  # sqlite3
        dbapi_conn.interrupt()


def interrupt_connections(conns: dict[int, Any]) -> None:
    """Shut down the sockets of these DBAPI connections (from another thread): a call blocked
    on a server that stopped answering fails at once, where server-side timeouts cannot help."""
    for conn in list(conns.values()):
        with contextlib.suppress(Exception):
            interrupt(conn)
