"""One leader among the processes that follow the log, and waking it when events commit.

* **The lock.** PostgreSQL: a session-level ``pg_try_advisory_lock`` on a connection of the
  leader's own (released when the process or its connection dies). SQLite: ``flock`` on
  ``<database>.follow.lock`` beside the database file (released by the kernel when the process
  dies); an in-memory database cannot be shared, so its one process always leads.
* **The wake-up.** PostgreSQL: ``LISTEN`` on :data:`CHANNEL` on the same connection; the appender
  sends ``NOTIFY`` inside every append transaction, so a notification arrives when the events
  are committed and visible. SQLite has no notifications: :attr:`Leadership.notifies` is False
  and the follower polls ``Store.max_position`` instead.

Driver errors (the connection dropped, the server restarted) leave as ``tracelake.errors``
(``StoreUnavailableError`` and friends), like every other store call.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from tracelake.store.connection import dialect_name, translate

CHANNEL = "tracelake_events"  # the appender NOTIFYs it (store/appender.py, PostgreSQL)
# pg_try_advisory_lock key of the follower's leadership; the append lock uses another key.
LEADER_LOCK_KEY = 0x74_6C_66_6F_6C_6C_6F_77  # "tlfollow"


class Leadership:
    """Held by the leader while it leads. On PostgreSQL it owns the leader's connection."""

    def __init__(self, conn: Any | None = None, what: str = "follow the log") -> None:
        self._conn = conn
        self._what = what

    @property
    def notifies(self) -> bool:
        """Appends wake this leader (:meth:`wait` returns True); otherwise it must poll."""
        return self._conn is not None

    def listen(self) -> None:
        """Start receiving append notifications (before the first catch-up, so that nothing
        committed after it is missed)."""
        if self._conn is not None:
            with _translated(f"{self._what}: listen for appends"):
                self._conn.execute(f"LISTEN {CHANNEL}")

    def wait(self, timeout: float) -> bool:
        """Block up to *timeout* seconds for an append notification; True when one came
        (the others queued meanwhile are drained: many commits, one wake-up)."""
        if self._conn is None:
            return False
        with _translated(f"{self._what}: wait for appends"):
            woken = False
            for _ in self._conn.notifies(timeout=timeout, stop_after=1):
                woken = True
            if woken:
                for _ in self._conn.notifies(timeout=0.0):
                    pass
            return woken

    def unlisten(self) -> None:
        """Stop receiving notifications (best effort: the connection may be gone)."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.execute(f"UNLISTEN {CHANNEL}")


@contextlib.contextmanager
def lead(url: str, what: str = "follow the log") -> Iterator[Leadership | None]:
    """Try to take the leadership of the database at *url*: a :class:`Leadership` while this
    process leads, None when another one does. Leaving the block releases it."""
    if dialect_name(url) == "postgresql":
        with _pg_lead(url, what) as leading:
            yield leading
        return
    path = _sqlite_path(url)
    if path is None:  # in-memory: no other process can share it
        yield Leadership(what=what)
        return
    with _file_lead(path) as held:
        yield Leadership(what=what) if held else None


@contextlib.contextmanager
def _pg_lead(url: str, what: str) -> Iterator[Leadership | None]:
    import psycopg

    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with _translated(f"{what}: connect for the leader lock"):
        conn = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
    try:
        with _translated(f"{what}: take the leader lock"):
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (LEADER_LOCK_KEY,)).fetchone()
        yield Leadership(conn, what) if row and row[0] else None
    finally:
        conn.close()  # ends the session: the advisory lock and LISTEN go with it


@contextlib.contextmanager
def _file_lead(path: Path) -> Iterator[bool]:
    with open(f"{path}.follow.lock", "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()}\n")
            fh.flush()
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def _translated(what: str) -> Iterator[None]:
    """psycopg's own errors (this module talks to the driver directly) as tracelake errors."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        wrapped = DBAPIError.instance(None, None, exc, psycopg.Error)
        if not isinstance(wrapped, DBAPIError):  # pragma: no cover - psycopg.Error always is
            raise
        raise translate(wrapped, what) from exc


def _sqlite_path(url: str) -> Path | None:
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    return Path(database).resolve()
