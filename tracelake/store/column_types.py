"""What every table of the schema shares: the MetaData (with its naming convention), the JSON
document type (JSONB on PostgreSQL, UTF-8 text on SQLite), positions and timestamps."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import BigInteger, DateTime, Dialect, Integer, MetaData, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator, TypeEngine

from tracelake import codec

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)


def dumps(value: Any) -> str:
    """The one JSON encoding for stored documents: compact, UTF-8, keys in given order."""
    return codec.dumps(value)


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
