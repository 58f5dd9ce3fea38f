"""Projection checkpoints ("tracking" in the eventsourcing library's ProcessRecorder).

A derived row and the checkpoint that says which events it reflects are written in one
transaction (see :meth:`tracelake.store.Store.process`), so a crash leaves both or neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.store.dialects import conflict_insert
from tracelake.store.schema import projection_checkpoints as checkpoints


@dataclass(frozen=True, slots=True)
class Tracking:
    """One process step: its connection (write derived rows through it), the checkpoints it
    locked, and :meth:`advance` to move a checkpoint in the same transaction."""

    conn: Connection
    positions: dict[str, int]

    def advance(self, name: str, position: int) -> None:
        if name not in self.positions:
            raise KeyError(f"checkpoint {name!r} was not locked by this step")
        self.conn.execute(
            checkpoints.update()
            .where(checkpoints.c.name == name)
            .values(position=position, updated_at=datetime.now(UTC))
        )
        self.positions[name] = position


def lock(conn: Connection, names: Sequence[str]) -> dict[str, int]:
    """Create missing checkpoint rows at 0 and lock them for the rest of the transaction
    (``FOR UPDATE`` on PostgreSQL; SQLite's write transaction already holds the database)."""
    now = datetime.now(UTC)
    conn.execute(
        conflict_insert(conn, checkpoints)
        .values([{"name": n, "position": 0, "updated_at": now} for n in names])
        .on_conflict_do_nothing(index_elements=["name"])
    )
    query = sa.select(checkpoints.c.name, checkpoints.c.position).where(
        checkpoints.c.name.in_(list(names))
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return {r.name: int(r.position) for r in conn.execute(query)}


def read(conn: Connection) -> dict[str, int]:
    return {r.name: int(r.position) for r in conn.execute(sa.select(checkpoints))}
