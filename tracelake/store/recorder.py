"""The store as a recorder, after the eventsourcing library's ladder:

* aggregate recorder — :meth:`Store.append` (idempotent, gap-safe batches);
* application recorder — :meth:`Store.read_after` (events after a position, in order) and
  :meth:`Store.max_position`;
* process recorder — :meth:`Store.process`: derived rows and the checkpoints that say which
  events they reflect, in one transaction; :meth:`Store.checkpoints` reads them.

The SQLAlchemy engine is private. Read models and views get connections from
:meth:`Store.reading` / :meth:`Store.writing`, which translate driver errors into the
``tracelake.errors`` tree with a next step in the message; nothing outside the store sees a
raw driver error or needs to know which backend it runs on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Connection, Engine

from tracelake.store import leadership, partitions, tracking
from tracelake.store.appender import Appender, PostgresAppender, SqliteAppender
from tracelake.store.connection import (
    create_engine,
    dialect_name,
    normalize_url,
    translate_errors,
    write_transaction,
)
from tracelake.store.interrupt import LiveConnections
from tracelake.store.leadership import Leadership
from tracelake.store.partitions import Partition
from tracelake.store.quarantine import (
    PostgresQuarantineWriter,
    QuarantineWriter,
    SqliteQuarantineWriter,
)
from tracelake.store.reader import Reader
from tracelake.store.records import (
    AppendResult,
    EncodedEvent,
    NewEvent,
    QuarantineItem,
    StoredEvent,
    StoredHead,
)
from tracelake.store.tracking import Tracking

if TYPE_CHECKING:
    from tracelake.store.migrate import Revision

_BACKENDS: dict[str, tuple[type[Appender], type[QuarantineWriter]]] = {
    "sqlite": (SqliteAppender, SqliteQuarantineWriter),
    "postgresql": (PostgresAppender, PostgresQuarantineWriter),
}


@dataclass(frozen=True, slots=True)
class StoreParts:
    """What :meth:`Store.parts_for_tests` hands a test."""

    engine: Engine
    appender: Appender
    quarantine: QuarantineWriter
    reader: Reader


class Store:
    """One database: the event log, its quarantine, checkpoints and the read models."""

    def __init__(
        self,
        url: str,
        engine: Engine,
        appender: Appender,
        quarantine: QuarantineWriter,
        reader: Reader,
    ) -> None:
        self.url = url
        self._engine = engine
        self._appender = appender
        self._quarantine = quarantine
        self._reader = reader
        self._live = LiveConnections(engine)  # from the start: every connection is known

    # -- what kind of database ----------------------------------------------------------------
    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``: for messages and backend-specific maintenance."""
        return self._engine.dialect.name

    @property
    def embedded(self) -> bool:
        """A file database in this process (SQLite): migrated on first use, no server."""
        return self.dialect == "sqlite"

    @property
    def notifies(self) -> bool:
        """Appends wake listeners (PostgreSQL LISTEN/NOTIFY); otherwise followers poll."""
        return self.dialect == "postgresql"

    # -- aggregate recorder -------------------------------------------------------------------
    def append(self, batch: Sequence[NewEvent | EncodedEvent]) -> AppendResult:
        """Append a batch in one transaction (idempotent; see ``store.appender``)."""
        return self._appender.append(batch)

    def encode(self, batch: Sequence[NewEvent | EncodedEvent]) -> list[EncodedEvent]:
        """The rows :meth:`append` would write for *batch* (redaction reports interned)."""
        return self._appender.encode(batch)

    def lock_appends(self, conn: Connection) -> None:
        """Hold the append lock in *conn*'s transaction (maintenance that must see no append
        commit meanwhile, e.g. retention)."""
        self._appender.lock(conn)

    def intern_reports(self, reports: Sequence[bytes | None]) -> list[str | None]:
        """References of encoded redaction reports, new ones stored first (``store.redactions``)."""
        return self._appender.reports.refs(reports)

    def report_ref(self, report: Mapping[str, Any] | None) -> str | None:
        """The ``events.redactions`` value of one redaction report (interned first)."""
        return self._appender.reports.ref_of(report)

    def redaction_report(self, stored: Any) -> dict[str, Any] | None:
        """The redaction report a stored ``StoredEvent.redactions`` value stands for."""
        return self._appender.reports.expand(stored)

    def intern_contexts(self, contexts: Sequence[bytes | None]) -> list[int | None]:
        """Ids of encoded ``trace_metadata`` objects, new ones stored first."""
        return self._appender.contexts.ids(contexts)

    def add_to_quarantine(self, items: Sequence[QuarantineItem]) -> int:
        """Record what could not be stored (idempotent); returns how many were new."""
        return self._quarantine.add(items)

    # -- application recorder -----------------------------------------------------------------
    def read_after(self, position: int, limit: int = 1000) -> list[StoredEvent]:
        """Up to *limit* events after *position*, in position order (safe to poll)."""
        return self._reader.read_after(position, limit)

    def iter_all(self, after: int = 0, batch: int = 5000) -> Iterator[StoredEvent]:
        """Every event after *after*, in position order, read *batch* at a time."""
        return self._reader.iter_all(after, batch)

    def max_position(self) -> int:
        return self._reader.max_position()

    def run_events(self, run_id: str) -> list[StoredEvent]:
        """One run's events in ``seq`` order."""
        return self._reader.run_events(run_id)

    def read_runs_until(self, run_ids: list[str], position: int) -> list[StoredEvent]:
        """Every event of these runs at or below *position*, in position order."""
        return self._reader.read_runs_until(run_ids, position)

    def existing_runs(self, run_ids: list[str]) -> set[str]:
        """Which of these run ids have stored events."""
        return self._reader.existing_runs(run_ids)

    def stored_heads(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], StoredHead]:
        """The content hash and indexed columns of the stored events at these keys."""
        return self._reader.stored_heads(keys)

    def stats(self) -> dict[str, Any]:
        """Counts for ``tracelake stats``: events by type and source, runs, quarantine."""
        return self._reader.stats()

    # -- process recorder ---------------------------------------------------------------------
    def checkpoints(self) -> dict[str, int]:
        """Every stored checkpoint by name (a name never advanced is absent)."""
        with self.reading("read projection checkpoints") as conn:
            return tracking.read(conn)

    @contextlib.contextmanager
    def process(self, names: Sequence[str], what: str = "apply projections") -> Iterator[Tracking]:
        """A write transaction holding the named checkpoints locked: write derived rows through
        ``tracking.conn`` and move checkpoints with ``tracking.advance``; both commit together,
        and an exception rolls both back."""
        with self.writing(what) as conn:
            yield Tracking(conn, tracking.lock(conn, names))

    # -- connections for the read models and views --------------------------------------------
    @contextlib.contextmanager
    def reading(self, what: str = "read the store") -> Iterator[Connection]:
        """A connection for reading; driver errors become tracelake errors about *what*."""
        with translate_errors(what), self._engine.connect() as conn:
            yield conn

    @contextlib.contextmanager
    def writing(self, what: str = "write to the store") -> Iterator[Connection]:
        """One write transaction (SQLite: holding the write lock from its first statement);
        committed when the block ends, rolled back on an exception."""
        with translate_errors(what), write_transaction(self._engine) as conn:
            yield conn

    @contextlib.contextmanager
    def autocommit(self, what: str) -> Iterator[Connection]:
        """A connection outside any transaction (VACUUM, role and partition DDL)."""
        with (
            translate_errors(what),
            self._engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn,
        ):
            yield conn

    @contextlib.contextmanager
    def snapshot(self, what: str) -> Iterator[Connection]:
        """One consistent read-only view (REPEATABLE READ on PostgreSQL), rolled back at the
        end: rows appended meanwhile are not seen."""
        with self.reading(what) as conn:
            if self.dialect == "postgresql":
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin() as tx:
                yield conn
                tx.rollback()

    def purge(self, table: str, what: str) -> None:
        """Make rows deleted from *table* unrecoverable from the database files, as far as the
        backend allows (SQLite: truncate the WAL; PostgreSQL: ``VACUUM FULL``)."""
        if self.embedded:
            with self.reading(what) as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            return
        with self.autocommit(what) as conn:
            conn.exec_driver_sql(f"VACUUM FULL {table}")

    def partitions(self) -> list[Partition]:
        """The monthly partitions of ``events`` (none when it is not partitioned)."""
        with self.reading("read partitions") as conn:
            return partitions.partitions(conn) if partitions.is_partitioned(conn) else []

    def lead(
        self, what: str = "follow the log"
    ) -> contextlib.AbstractContextManager[Leadership | None]:
        """Try to become the one process that follows this database (``store.leadership``):
        a :class:`Leadership` (which can wait for appends on PostgreSQL) while it leads, None
        when another process does."""
        return leadership.lead(self.url, what)

    def interrupt(self) -> None:
        """End any call this store's connections are blocked in, from another thread (a
        server that stopped answering; ``store.interrupt``). The calls fail with a driver error;
        the pool replaces the connections."""
        self._live.interrupt()

    # -- schema (alembic is imported only when one of these runs) -------------------------------------------------------------------------------
    def upgrade(self, revision: str = "head") -> None:
        from tracelake.store import migrate

        migrate.upgrade(self._engine, revision)

    def downgrade(self, revision: str, *, force: bool = False) -> list[str]:
        from tracelake.store import migrate

        return migrate.downgrade(self._engine, revision, force=force)

    def revision(self) -> str | None:
        from tracelake.store.schema_head import stored_revision

        return stored_revision(self._engine)

    def history(self) -> list[Revision]:
        from tracelake.store import migrate

        return migrate.history(self._engine)

    def schema_diff(self) -> list[Any]:
        from tracelake.store import migrate

        return migrate.schema_diff(self._engine)

    def parts_for_tests(self) -> StoreParts:
        """The test seam: the store's parts, for tests that check one of them directly (an
        append held open mid-transaction, a cache's limit). Code under tracelake/ and
        pipelines/ never calls it (tests/architecture checks)."""
        return StoreParts(self._engine, self._appender, self._quarantine, self._reader)

    def dispose(self) -> None:
        """Close the pool's connections (a store stays usable: the pool reopens them)."""
        self._engine.dispose()


def open_store(url: str, engine: Engine | None = None, *, bounded: float | None = None) -> Store:
    """Open (not create) a store; run ``tracelake db upgrade`` to create the schema.
    ``bounded=<seconds>``: no database call may wait longer (see ``create_engine``)."""
    url = normalize_url(url)
    engine = engine or create_engine(url, bounded=bounded)
    appender_cls, quarantine_cls = _BACKENDS[dialect_name(url)]
    writer = quarantine_cls(engine)
    return Store(url, engine, appender_cls(engine, writer), writer, Reader(engine))
