"""The one SQLAlchemy Core schema. Alembic migrations must produce exactly this (tested).

``events`` is the append-only log. Its payload is JSONB on PostgreSQL and UTF-8 JSON text on
SQLite (never ``\\u``-escaped, so analysts can read and ``json_extract`` it as is).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Dialect,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator, TypeEngine

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)


def dumps(value: Any) -> str:
    """The one JSON encoding for stored documents: compact, UTF-8, keys in given order."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class JSONDocument(TypeDecorator[Any]):
    """JSONB on PostgreSQL; plain UTF-8 JSON text on SQLite."""

    impl = Text
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(Text())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return dumps(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return json.loads(value)


# Global order: BIGINT identity on PostgreSQL, INTEGER PRIMARY KEY (rowid) on SQLite.
Position = BigInteger().with_variant(Integer(), "sqlite")
Timestamp = DateTime(timezone=True)

events = Table(
    "events",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=True),
    Column("run_id", Text, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("type", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("event_id", Text, nullable=True, unique=True),
    Column("plan_id", Text, nullable=True),
    Column("step_id", Text, nullable=True),
    Column("tool", Text, nullable=True),
    Column("collection_id", Text, nullable=True),
    Column("recorded_at", Timestamp, nullable=False),
    Column("content_hash", Text, nullable=False),
    Column("payload", JSONDocument, nullable=False),
    Column("redactions", JSONDocument, nullable=True),
    UniqueConstraint("run_id", "seq"),
    Index(None, "type", "position"),
    Index(None, "collection_id", "position"),
    sqlite_autoincrement=True,
)

quarantine = Table(
    "quarantine",
    metadata,
    Column("id", Position, primary_key=True, autoincrement=True),
    Column("recorded_at", Timestamp, nullable=False),
    Column("origin", Text, nullable=False),  # a file name, "-" for stdin, "sink"
    Column("line_no", Integer, nullable=True),
    Column("reason", Text, nullable=False),
    Column("detail", Text, nullable=False),  # scrubbed; never the raw content
    Column("event_type", Text, nullable=True),
    Column("run_id", Text, nullable=True),
    Column("seq", Integer, nullable=True),
    Column("preview", Text, nullable=True),  # scrubbed, truncated
    Column("dedupe_key", Text, nullable=False, unique=True),
    Index(None, "reason"),
    sqlite_autoincrement=True,
)
