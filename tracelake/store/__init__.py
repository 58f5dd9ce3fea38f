"""The event store: one schema, an appender and a quarantine writer per dialect, a reader."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine

from tracelake.store.appender import Appender, PostgresAppender, SqliteAppender
from tracelake.store.engine import create_engine, dialect_name, normalize_url
from tracelake.store.quarantine import (
    PostgresQuarantineWriter,
    QuarantineWriter,
    SqliteQuarantineWriter,
)
from tracelake.store.reader import Reader
from tracelake.store.records import (
    AppendResult,
    NewEvent,
    QuarantineItem,
    StoredEvent,
)

__all__ = [
    "AppendResult",
    "NewEvent",
    "QuarantineItem",
    "Store",
    "StoredEvent",
    "open_store",
]

_BACKENDS: dict[str, tuple[type[Appender], type[QuarantineWriter]]] = {
    "sqlite": (SqliteAppender, SqliteQuarantineWriter),
    "postgresql": (PostgresAppender, PostgresQuarantineWriter),
}


@dataclass(frozen=True, slots=True)
class Store:
    url: str
    engine: Engine
    appender: Appender
    quarantine: QuarantineWriter
    reader: Reader

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def dispose(self) -> None:
        self.engine.dispose()


def open_store(url: str, engine: Engine | None = None) -> Store:
    """Open (not create) a store; run ``tracelake db upgrade`` to create the schema."""
    url = normalize_url(url)
    engine = engine or create_engine(url)
    appender_cls, quarantine_cls = _BACKENDS[dialect_name(url)]
    writer = quarantine_cls(engine)
    return Store(url, engine, appender_cls(engine, writer), writer, Reader(engine))
