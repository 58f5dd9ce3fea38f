"""The quarantine table: what could not be stored, with the reason, never the raw content.

Writes are idempotent (a unique ``dedupe_key``), so ingesting the same bad file twice
quarantines each bad line once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from tracelake.errors import DataRejectedError
from tracelake.store.connection import translate_errors, write_transaction
from tracelake.store.records import EncodedEvent, QuarantineItem
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


# What the appender quarantines: an event the database refused, and a different event under a
# key that is taken.
def rejected_item(e: EncodedEvent, exc: DataRejectedError) -> QuarantineItem:
    preview = e.payload_json
    return QuarantineItem(
        origin="append",
        reason="rejected_by_database",
        detail=str(exc)[:500],
        recorded_at=datetime.now(UTC),
        dedupe_key=f"rejected:{e.run_id}:{e.seq}:{e.event_id}:{e.content_hash}",
        event_type=e.type,
        run_id=e.run_id,
        seq=e.seq,
        preview=preview[:2000],  # already scrubbed: the payload as it would have been stored
    )


def conflict_item(e: EncodedEvent) -> QuarantineItem:
    """A different event under a taken key. Its scrubbed payload is kept in the preview, so
    nothing is lost: an operator can re-send it under a free seq or event_id."""
    taken = " and ".join(
        part
        for part in (
            f"seq {e.seq}" if e.seq is not None else "",
            f"event_id {e.event_id!r}" if e.event_id else "",
        )
        if part
    )
    return QuarantineItem(
        origin="append",
        reason="sequence_conflict",
        detail=(
            f"run {e.run_id!r} already has a different event at {taken}; "
            "give each event of a run its own seq or event_id"
        ),
        recorded_at=datetime.now(UTC),
        dedupe_key=f"conflict:{e.run_id}:{e.seq}:{e.event_id}:{e.content_hash}",
        event_type=e.type,
        run_id=e.run_id,
        seq=e.seq,
        preview=e.payload_json[:2000],  # already scrubbed
    )
