"""The quarantine table: what could not be stored, with the reason, never the raw content.

Writes are idempotent (a unique ``dedupe_key``), so ingesting the same bad file twice
quarantines each bad line once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from tracelake.store.connection import translate_errors, write_transaction
from tracelake.store.records import QuarantineItem
from tracelake.store.schema import quarantine


class QuarantineWriter(ABC):
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, items: Sequence[QuarantineItem]) -> int:
        """Write items in their own transaction; returns how many were new."""
        if not items:
            return 0
        with translate_errors("write to quarantine"), write_transaction(self.engine) as conn:
            return self.write(conn, items)

    def write(self, conn: Connection, items: Sequence[QuarantineItem]) -> int:
        rows = [asdict(i) for i in items]
        # RETURNING counts the rows really inserted: an executemany's rowcount is 0 on psycopg
        stmt = self.insert_ignoring_duplicates().returning(quarantine.c.id)
        return len(conn.execute(stmt, rows).all())

    @abstractmethod
    def insert_ignoring_duplicates(self) -> Any: ...


class SqliteQuarantineWriter(QuarantineWriter):
    def insert_ignoring_duplicates(self) -> Any:
        return sqlite.insert(quarantine).on_conflict_do_nothing(index_elements=["dedupe_key"])


class PostgresQuarantineWriter(QuarantineWriter):
    def insert_ignoring_duplicates(self) -> Any:
        return postgresql.insert(quarantine).on_conflict_do_nothing(index_elements=["dedupe_key"])
