"""One root exception for everything tracelake raises on purpose.

Driver errors (sqlite3, psycopg) are translated once, at the store boundary, into
:class:`StoreError` subclasses, so callers never need to import a driver to catch them.
Every message says what happened and what to do next.
"""

from __future__ import annotations


class TracelakeError(Exception):
    """Root of all tracelake errors."""


class ConfigError(TracelakeError):
    """A setting is missing or invalid."""


class ContractError(TracelakeError):
    """An input event does not match the event contract (it is quarantined, never stored)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class ScrubError(TracelakeError):
    """Scrubbing an event failed; the pipeline stores a minimal record instead (fail closed)."""


class StoreError(TracelakeError):
    """The database refused or could not complete an operation."""


class DataRejectedError(StoreError):
    """The database refused the data itself (SQLSTATE class 22, e.g. a value it cannot store).

    Retrying the same batch cannot succeed: the appender isolates and quarantines the event.
    """


class StoreUnavailableError(StoreError):
    """The database cannot be reached (connection refused, server down, network error)."""


class SchemaNotReadyError(StoreError):
    """The database has no tracelake schema or an old one: run `tracelake db upgrade`."""


class AppendOnlyViolationError(StoreError):
    """Something tried to UPDATE or DELETE rows of the append-only `events` table."""


class StoreBusyError(StoreError):
    """Another transaction holds a lock we need (SQLite busy, PostgreSQL lock timeout), or
    PostgreSQL broke a deadlock or a serialization conflict by cancelling ours.

    Nothing was written by the failed transaction; an idempotent operation can be retried
    (see :func:`tracelake.store.connection.retry_busy`).
    """


class StoreTimeoutError(StoreError):
    """A statement ran longer than the database allows (statement_timeout)."""


class StoreAccessError(StoreError):
    """The database refused us: wrong password, unknown user or database, missing privileges,
    a read-only file or folder, or a file that is not a database."""


class StoreFullError(StoreError):
    """The database's disk is full."""
