"""Ending a database call that hangs, from another thread: a server that stopped answering
(SIGSTOP, a frozen VM) ignores its own statement timeouts, and the kernel still answers TCP
keepalives for it, so the only way out is to shut the connection's socket down (psycopg) or
to interrupt it (sqlite3).

Every store keeps a :class:`LiveConnections` of its engine from the moment it is opened, so
whoever must end a hung call (the sink's watchdog and shipper, ingest's call guard) asks the
store (``Store.interrupt``) instead of watching the pool itself: a watcher that started late
would miss the connections opened before it (an earlier version emptied the pool to start
afresh, which orphaned connections other threads had checked out)."""

from __future__ import annotations

import contextlib
import os
import socket
import weakref
from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


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


class LiveConnections:
    """The DBAPI connections an engine's pool has open (held weakly where the driver allows:
    one that is dropped without being closed is not kept alive here)."""

    PRUNE_AT = 64  # entries of collected connections are dropped once there are this many

    def __init__(self, engine: Engine) -> None:
        self._refs: dict[int, Callable[[], Any]] = {}
        self._pid = os.getpid()
        # first of the connect listeners: SQLAlchemy's own set the first connection up with
        # about ten queries, which a stopped server makes wait for good (a fault attack)
        event.listen(engine, "connect", self._opened, insert=True)
        event.listen(engine, "close", self._closed)
        event.listen(engine, "close_detached", self._closed)

    def _opened(self, dbapi_conn: Any, _record: Any) -> None:
        if os.getpid() != self._pid:  # a forked child: the parent's connections are not ours
            self._refs, self._pid = {}, os.getpid()
        if len(self._refs) >= self.PRUNE_AT:  # in place: other threads may be adding now
            for k, known in list(self._refs.items()):
                if known() is None:
                    self._refs.pop(k, None)
        try:
            ref: Callable[[], Any] = weakref.ref(dbapi_conn)
        except TypeError:  # sqlite3.Connection: no weak references; closed by the pool
            ref = _Strong(dbapi_conn)
        self._refs[id(dbapi_conn)] = ref

    def _closed(self, dbapi_conn: Any, _record: Any = None) -> None:
        self._refs.pop(id(dbapi_conn), None)

    def interrupt(self) -> None:
        """Shut down every live connection (from another thread): a call blocked on a server
        that stopped answering fails at once, where server-side timeouts cannot help."""
        if os.getpid() != self._pid:
            return  # a forked child must never shut its parent's sockets down
        for ref in list(self._refs.values()):
            conn = ref()
            if conn is not None:
                with contextlib.suppress(Exception):
                    interrupt(conn)


class _Strong:
    __slots__ = ("conn",)

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __call__(self) -> Any:
        return self.conn
