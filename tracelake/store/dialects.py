"""The few SQL constructs that differ between SQLite and PostgreSQL, chosen by connection,
so that code outside the store never names a dialect."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection


def conflict_insert(conn: Connection, table: sa.Table) -> Any:
    """``INSERT`` with ``on_conflict_do_nothing`` / ``on_conflict_do_update`` / ``excluded``
    for this connection's backend (both dialects spell them the same)."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


_PG_FORMATS = {"day": "YYYY-MM-DD", "hour": "YYYY-MM-DD HH24:00", "minute": "YYYY-MM-DD HH24:MI"}
_SQLITE_FORMATS = {"day": "%Y-%m-%d", "hour": "%Y-%m-%d %H:00", "minute": "%Y-%m-%d %H:%M"}


def time_bucket(conn: Connection, column: Any, unit: str) -> Any:
    """A timestamp's bucket label, UTC: ``2026-12-01``, ``2026-12-01 14:00``, ``... 14:05``."""
    if conn.dialect.name == "postgresql":
        utc = sa.func.timezone("UTC", column)
        return sa.func.to_char(sa.func.date_trunc(unit, utc), _PG_FORMATS[unit])
    return sa.func.strftime(_SQLITE_FORMATS[unit], column)


def time_param(conn: Connection, t: datetime) -> object:
    """A timestamp parameter as the backend stores it (SQLite: the appender's text form)."""
    if conn.dialect.name == "sqlite":
        return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return t


def contains(conn: Connection, column: Any, needle: str) -> Any:
    """``needle`` occurs in the column's text."""
    text = sa.cast(column, sa.Text)
    if conn.dialect.name == "postgresql":
        return sa.func.strpos(text, needle) > 0
    return sa.func.instr(text, needle) > 0


def json_as_text(conn: Connection, column: str) -> str:
    """A select-list item giving a JSON column as text (PostgreSQL's jsonb is cast)."""
    return f"{column}::text AS {column}" if conn.dialect.name == "postgresql" else column


def secure_delete(conn: Connection) -> None:
    """Deleted rows' bytes are zeroed in the file (SQLite); PostgreSQL needs a VACUUM."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("PRAGMA secure_delete = ON")
