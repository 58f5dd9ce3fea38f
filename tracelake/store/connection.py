"""Engines for both dialects, and the one place driver errors become tracelake errors."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine, ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from tracelake.errors import (
    AppendOnlyViolationError,
    ConfigError,
    DataRejectedError,
    SchemaNotReadyError,
    StoreAccessError,
    StoreBusyError,
    StoreError,
    StoreFullError,
    StoreTimeoutError,
    StoreUnavailableError,
)

log = logging.getLogger("tracelake.store")

APPEND_ONLY_MESSAGE = "events is append-only"
WRITE_OPTION = "tracelake_write"


def normalize_url(url: str) -> str:
    """Accept ``postgresql://`` and ``postgres://`` and use psycopg 3 for them."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def dialect_name(url: str) -> str:
    try:
        return make_url(normalize_url(url)).get_backend_name()
    except ArgumentError:
        raise ConfigError(
            f"cannot parse database URL {url!r}; use sqlite:///path.db or "
            "postgresql://user@host:5432/dbname"
        ) from None


def create_engine(url: str, *, bounded: float | None = None, **kwargs: Any) -> Engine:
    """``bounded=<seconds>``: no database call may wait longer (connect timeout, statement and
    lock timeouts, TCP keepalives on PostgreSQL; the busy timeout on SQLite). The sink uses it."""
    url = normalize_url(url)
    name = dialect_name(url)
    if name == "sqlite":
        _create_private(make_url(url).database)
        engine = sa.create_engine(url, **kwargs)
        _configure_sqlite(engine, busy_ms=30000 if bounded is None else int(bounded * 1000))
        event.listen(engine, "handle_error", _on_error)
        return engine
    if name == "postgresql":
        kwargs.setdefault("pool_pre_ping", True)
        connect_args = kwargs.setdefault("connect_args", {})
        connect_args.setdefault("connect_timeout", 10)
        if bounded is not None:
            ms = max(1, int(bounded * 1000))
            connect_args.update(
                connect_timeout=max(2, round(bounded)),
                keepalives=1,
                keepalives_idle=max(1, round(bounded / 2)),
                keepalives_interval=max(1, round(bounded / 6)),
                keepalives_count=3,
                tcp_user_timeout=ms,
                options=f"-c statement_timeout={ms} -c lock_timeout={ms}",
            )
        try:
            engine = sa.create_engine(url, **kwargs)
        except NoSuchModuleError as exc:
            raise ConfigError(f"unsupported PostgreSQL driver in {url!r}: {exc}") from None
        event.listen(engine, "handle_error", _on_error)
        return engine
    raise ConfigError(f"unsupported database {name!r}: tracelake runs on SQLite and PostgreSQL")


def _create_private(database: str | None) -> None:
    """Create a new SQLite file as mode 0600 before SQLite does (it would use the umask, often
    world-readable); SQLite gives its -wal and -shm files the database file's mode."""
    if database in (None, "", ":memory:") or database.startswith("file:"):
        return
    with contextlib.suppress(FileExistsError, FileNotFoundError, PermissionError):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _configure_sqlite(engine: Engine, busy_ms: int = 30000) -> None:
    """WAL, a busy timeout, and real transactions.

    pysqlite's own transaction handling begins lazily and never for SELECT, so a write could
    interleave with another writer; we take over and start every transaction with
    ``BEGIN IMMEDIATE`` when it will write (see :func:`write_transaction`), which takes the
    database's single write lock up front. That lock is what makes positions gap-safe on SQLite
    (see ``store.appender``). Readers use a deferred ``BEGIN`` and, in WAL mode, never wait.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        if engine.url.database not in (None, "", ":memory:"):
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        write = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


@contextlib.contextmanager
def write_transaction(engine: Engine) -> Iterator[sa.Connection]:
    """A transaction that will write: on SQLite it holds the write lock from its first statement."""
    with engine.connect().execution_options(**{WRITE_OPTION: True}) as conn, conn.begin():
        yield conn


@contextlib.contextmanager
def translate_errors(what: str) -> Iterator[None]:
    """Map driver errors to the tracelake tree, with a next step in the message."""
    try:
        yield
    except DBAPIError as exc:
        raise translate(exc, what) from exc


def translate(exc: DBAPIError, what: str) -> StoreError:
    """The tracelake error for a driver error: what happened, and what to do about it."""
    message = _first_line(str(exc.orig) if exc.orig is not None else str(exc))
    state = str(getattr(exc.orig, "sqlstate", None) or "")
    for classify in _CLASSIFIERS:
        error = classify(state, message.lower(), message, what)
        if error is not None:
            return error
    if _is_unavailable(exc):
        return StoreUnavailableError(
            f"{what}: the database is unreachable ({message}); "
            "check TRACELAKE_DATABASE_URL and that the server is running"
        )
    return StoreError(
        f"{what}: the database reported an error ({message}); check the database's own log, "
        "and rerun with TRACELAKE_DEBUG=1 for the full trace if it persists"
    )


def _append_only(state: str, text: str, message: str, what: str) -> StoreError | None:
    if APPEND_ONLY_MESSAGE in message:
        return AppendOnlyViolationError(f"{what}: {APPEND_ONLY_MESSAGE}; it is never changed")
    return None


def _no_schema(state: str, text: str, message: str, what: str) -> StoreError | None:
    if (
        state == "42P01"
        or "no such table" in text
        or ("relation" in text and "does not exist" in text)
    ):
        return SchemaNotReadyError(
            f"{what}: the database has no tracelake schema ({message}); run `tracelake db upgrade`"
        )
    return None


def _rejected(state: str, text: str, message: str, what: str) -> StoreError | None:
    if state.startswith("22"):
        return DataRejectedError(f"{what}: the database refused a value ({message})")
    return None


def _busy_error(state: str, text: str, message: str, what: str) -> StoreError | None:
    busy = _busy(state, text)
    return StoreBusyError(f"{what}: {busy} ({message}); {BUSY_ADVICE}") if busy else None


def _timeout(state: str, text: str, message: str, what: str) -> StoreError | None:
    if state == "57014" or "statement timeout" in text:
        return StoreTimeoutError(
            f"{what}: the statement ran longer than the server's statement_timeout ({message}); "
            "retry when the database is less loaded, or raise the timeout"
        )
    return None


def _full(state: str, text: str, message: str, what: str) -> StoreError | None:
    if state == "53100" or "database or disk is full" in text:
        return StoreFullError(
            f"{what}: the database's disk is full ({message}); free space, then run the "
            "command again (nothing was half-written)"
        )
    return None


def _access_error(state: str, text: str, message: str, what: str) -> StoreError | None:
    access = _access(state, text)
    return StoreAccessError(f"{what}: {access} ({message})") if access else None


_CLASSIFIERS = (
    _append_only,
    _no_schema,
    _rejected,
    _busy_error,
    _timeout,
    _full,
    _access_error,
)


BUSY_ADVICE = (
    "nothing was written by this attempt; run the command again (it is safe: writes are "
    "idempotent), or wait for the other process to finish"
)


def _busy(state: str, text: str) -> str | None:
    if state == "40P01" or "deadlock detected" in text:
        return "a deadlock with another transaction (the database cancelled this one)"
    if state == "40001":
        return "a serialization conflict with a concurrent transaction"
    if state == "55P03" or "lock timeout" in text:
        return "another transaction held a lock for longer than the lock timeout"
    if "database is locked" in text or "database table is locked" in text:
        return (
            "another process held the database's write lock for longer than the busy timeout (30 s)"
        )
    return None


def _access(state: str, text: str) -> str | None:
    return _server_access(state, text) or _file_access(text)


def _server_access(state: str, text: str) -> str | None:
    if state == "28P01" or "password authentication failed" in text:
        return "the server refused the password; fix the user or password in TRACELAKE_DATABASE_URL"
    if state == "28000" or ("role" in text and "does not exist" in text):
        return "the server does not know this user; fix the user in TRACELAKE_DATABASE_URL"
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return (
            "the database does not exist; create it (createdb NAME) or fix the name in "
            "TRACELAKE_DATABASE_URL"
        )
    if state == "42501" or "permission denied" in text:
        return (
            "the database user lacks a privilege; run as the schema's owner or grant it "
            "(see the README's PostgreSQL section)"
        )
    return None


def _file_access(text: str) -> str | None:
    if "readonly database" in text or "read-only" in text:
        return (
            "the database file (or its folder, which holds the WAL) is read-only; fix the "
            "permissions or point TRACELAKE_DATABASE_URL elsewhere"
        )
    if "file is not a database" in text or "file is encrypted" in text:
        return (
            "that file is not an SQLite database; point TRACELAKE_DATABASE_URL at a tracelake "
            "database or a new file"
        )
    if "unable to open database" in text:
        return "cannot open the database file; check that its folder exists and is writable"
    return None


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


T = TypeVar("T")


def retry_busy(fn: Callable[[], T], attempts: int = 5, first_wait: float = 0.2) -> T:
    """Run an idempotent operation again when it lost a lock or a deadlock (StoreBusyError)."""
    wait = first_wait
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except StoreBusyError:
            if attempt == attempts:
                raise
            log.warning("the database was busy; retrying (%d of %d)", attempt, attempts - 1)
            time.sleep(wait * (0.5 + random.random()))
            wait *= 2
    raise AssertionError("unreachable")  # pragma: no cover


def _on_error(context: ExceptionContext) -> BaseException | None:
    """Every driver error on this engine, translated once, wherever it happened."""
    if context.is_pre_ping:
        return None  # the pool handles a dead pooled connection itself
    exc = context.sqlalchemy_exception
    if not isinstance(exc, DBAPIError):
        return None
    what = "connect to the database" if context.connection is None else "database operation"
    return translate(exc, what)


def _is_unavailable(exc: DBAPIError) -> bool:
    """Connection-level trouble (busy, access and timeouts are classified before this)."""
    if exc.connection_invalidated:
        return True
    import psycopg

    orig = exc.orig
    if isinstance(orig, psycopg.OperationalError):
        return True
    text = str(orig).lower()
    return "unable to open database" in text or "disk i/o error" in text
