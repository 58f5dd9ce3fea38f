"""Engines for both dialects, and the one place driver errors become tracelake errors."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from tracelake.errors import (
    AppendOnlyViolationError,
    ConfigError,
    DataRejectedError,
    SchemaNotReadyError,
    StoreError,
    StoreUnavailableError,
)

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
        engine = sa.create_engine(url, **kwargs)
        _configure_sqlite(engine, busy_ms=30000 if bounded is None else int(bounded * 1000))
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
            return sa.create_engine(url, **kwargs)
        except NoSuchModuleError as exc:
            raise ConfigError(f"unsupported PostgreSQL driver in {url!r}: {exc}") from None
    raise ConfigError(f"unsupported database {name!r}: tracelake runs on SQLite and PostgreSQL")


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
    message = (str(exc.orig) if exc.orig is not None else str(exc)).strip()
    if APPEND_ONLY_MESSAGE in message:
        return AppendOnlyViolationError(f"{what}: {APPEND_ONLY_MESSAGE}; it is never changed")
    if "no such table" in message or ("relation" in message and "does not exist" in message):
        return SchemaNotReadyError(
            f"{what}: the database has no tracelake schema; run `tracelake db upgrade`"
        )
    if getattr(exc.orig, "sqlstate", None) and str(exc.orig.sqlstate).startswith("22"):  # type: ignore[union-attr]
        return DataRejectedError(f"{what}: the database refused a value ({message})")
    if _is_unavailable(exc):
        return StoreUnavailableError(
            f"{what}: the database is unreachable ({message}); "
            "check TRACELAKE_DATABASE_URL and that the server is running"
        )
    return StoreError(f"{what}: {message}")


def _is_unavailable(exc: DBAPIError) -> bool:
    if exc.connection_invalidated:
        return True
    import psycopg

    orig = exc.orig
    if isinstance(orig, psycopg.OperationalError):
        return True
    text = str(orig).lower()
    return "unable to open database" in text or "disk i/o error" in text
