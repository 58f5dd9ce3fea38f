"""The projection engine: named projections, checkpoints, catch-up and rebuild.

Invariant 4 — a projection writes its rows and its checkpoint in ONE transaction. Each step:

1. open a write transaction (``BEGIN IMMEDIATE`` on SQLite) and lock the checkpoint rows of
   the projections being advanced (``SELECT ... FOR UPDATE`` on PostgreSQL), so two
   projectors never apply the same batch;
2. read the next batch after the lowest checkpoint with ``Reader.read_after`` — gap-safe,
   because appends are serialised (see ``store.appender``): nothing can later appear below
   a visible position;
3. fold every run the batch touches from all its events up to the batch's last position and
   replace that run's rows (see ``projections.fold``);
4. move the checkpoints to the batch's last position; COMMIT.

A crash anywhere before COMMIT rolls back rows and checkpoint together: the batch is applied
again on the next run, and because a run's rows are replaced (not incremented) nothing is
counted twice. Only projections sitting at the same checkpoint share a batch; one that lags
(e.g. being rebuilt) is advanced alone until it has caught up.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from tracelake.errors import ConfigError
from tracelake.projections.fold import RunFold, fold
from tracelake.store import Store
from tracelake.store.engine import translate_errors, write_transaction
from tracelake.store.records import StoredEvent
from tracelake.store.schema import projection_checkpoints as checkpoints

DEFAULT_BATCH = 2000
# tracelake's own decision events (promotion: ``suggestion.*``, run id ``suggestion:<id>``) live
# in the same log; they are not runner runs, so only projections that ask for them see them.
DECISIONS_SOURCE = "tracelake"


class Projection(ABC):
    """A named read model derived per run. Subclasses own ``tables`` and write their rows."""

    name: ClassVar[str]
    tables: ClassVar[tuple[sa.Table, ...]]

    @abstractmethod
    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        """Replace the rows of these runs (each folded from its whole stored prefix)."""

    def accepts(self, run: RunFold) -> bool:
        """Which runs this projection sees: runner runs, unless it says otherwise."""
        return run.source != DECISIONS_SOURCE

    def reset(self, conn: Connection) -> None:
        for table in reversed(self.tables):
            conn.execute(table.delete())


def delete_runs(conn: Connection, table: sa.Table, run_ids: list[str]) -> None:
    for start in range(0, len(run_ids), 400):
        conn.execute(table.delete().where(table.c.run_id.in_(run_ids[start : start + 400])))


def insert(conn: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    if rows:
        conn.execute(table.insert(), rows)


@dataclass
class CatchUp:
    """What one catch-up did: events read, and each projection's checkpoint after it."""

    events: int = 0
    batches: int = 0
    positions: dict[str, int] = field(default_factory=dict)


class ProjectionEngine:
    def __init__(
        self,
        store: Store,
        projections: Iterable[Projection] | None = None,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        from tracelake.projections import default_projections

        self.store = store
        self.projections = list(projections) if projections is not None else default_projections()
        self.batch_size = batch_size

    # -- selection -----------------------------------------------------------------------
    def select(self, names: Sequence[str] | None) -> list[Projection]:
        if not names:
            return list(self.projections)
        known = {p.name: p for p in self.projections}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(
                f"no projection named {', '.join(map(repr, unknown))}; "
                f"known projections: {', '.join(known)}"
            )
        return [known[n] for n in names]

    # -- public operations -----------------------------------------------------------------
    def checkpoints(self) -> dict[str, int]:
        with translate_errors("read projection checkpoints"), self.store.engine.connect() as c:
            rows = {r.name: int(r.position) for r in c.execute(sa.select(checkpoints))}
        return {p.name: rows.get(p.name, 0) for p in self.projections}

    def catch_up(
        self, names: Sequence[str] | None = None, max_batches: int | None = None
    ) -> CatchUp:
        chosen = self.select(names)
        result = CatchUp()
        while max_batches is None or result.batches < max_batches:
            read = self.step(chosen)
            if read == 0:
                break
            result.events += read
            result.batches += 1
        result.positions = {n: p for n, p in self.checkpoints().items() if n in _names(chosen)}
        return result

    def reset(self, names: Sequence[str] | None = None) -> None:
        """Delete the projections' rows and set their checkpoints to zero, in one transaction."""
        chosen = self.select(names)
        with translate_errors("reset projections"), write_transaction(self.store.engine) as conn:
            self._lock(conn, chosen)
            for p in chosen:
                p.reset(conn)
                self._save(conn, p.name, 0)

    def rebuild(self, names: Sequence[str] | None = None) -> CatchUp:
        self.reset(names)
        return self.catch_up(names)

    # -- one batch -------------------------------------------------------------------------
    def step(self, chosen: Sequence[Projection]) -> int:
        """Advance the projections at the lowest checkpoint by one batch; events read."""
        with translate_errors("apply projections"), write_transaction(self.store.engine) as conn:
            positions = self._lock(conn, chosen)
            low = min(positions.values())
            active = [p for p in chosen if positions[p.name] == low]
            batch = self.store.reader.read_after(low, self.batch_size)
            if not batch:
                return 0
            high = batch[-1].position
            runs = self._fold(batch, low)
            for p in active:
                p.apply(conn, [r for r in runs if p.accepts(r)])
                self._save(conn, p.name, high)
            return len(batch)

    def _fold(self, batch: list[StoredEvent], low: int) -> list[RunFold]:
        by_run: dict[str, list[StoredEvent]] = defaultdict(list)
        for e in batch:
            by_run[e.run_id].append(e)
        for e in self.store.reader.read_runs_until(list(by_run), low):
            by_run[e.run_id].append(e)
        return [fold(sorted(evs, key=_position)) for evs in by_run.values()]

    # -- checkpoints -----------------------------------------------------------------------
    def _lock(self, conn: Connection, chosen: Sequence[Projection]) -> dict[str, int]:
        names = _names(chosen)
        ins = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        now = datetime.now(UTC)
        conn.execute(
            ins(checkpoints)
            .values([{"name": n, "position": 0, "updated_at": now} for n in names])
            .on_conflict_do_nothing(index_elements=["name"])
        )
        query = sa.select(checkpoints.c.name, checkpoints.c.position).where(
            checkpoints.c.name.in_(names)
        )
        if conn.dialect.name == "postgresql":
            query = query.with_for_update()
        return {r.name: int(r.position) for r in conn.execute(query)}

    @staticmethod
    def _save(conn: Connection, name: str, position: int) -> None:
        conn.execute(
            checkpoints.update()
            .where(checkpoints.c.name == name)
            .values(position=position, updated_at=datetime.now(UTC))
        )


def _names(chosen: Sequence[Projection]) -> list[str]:
    return [p.name for p in chosen]


def _position(e: StoredEvent) -> int:
    return e.position
