"""Reading the log in global order, by run, and summarised.

``read_after`` is safe to poll: appends are serialised (see ``store.appender``), so a position
that is visible has no invisible lower neighbour that could still appear.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine, Row

from tracelake.store import column_keys
from tracelake.store.connection import translate_errors
from tracelake.store.records import TRACELAKE_SOURCE, StoredEvent, StoredHead
from tracelake.store.redactions import CONTEXT_KEY, Contexts, stored_form
from tracelake.store.schema import events, quarantine

_SELECT = sa.select(
    events.c.position,
    events.c.run_id,
    events.c.seq,
    events.c.type,
    events.c.source,
    events.c.recorded_at,
    events.c.payload,
    events.c.event_id,
    events.c.plan_id,
    events.c.step_id,
    events.c.tool,
    events.c.collection_id,
    events.c.redactions,
)


def _events(contexts: Contexts, rows: Iterable[Row[Any]]) -> list[StoredEvent]:
    """Rows as events, each interned ``trace_metadata`` put back into its payload (0009), and
    the keys the columns hold (0010, ``store.column_keys``)."""
    found = []
    wanted: list[tuple[dict[str, Any], int]] = []
    for row in rows:
        m = {**row._mapping}
        if m["recorded_at"].tzinfo is None:
            m["recorded_at"] = m["recorded_at"].replace(tzinfo=UTC)
        redactions, ref, omitted = stored_form(m["redactions"])
        if ref is not None or omitted:
            m["redactions"] = redactions
        if omitted:
            columns = (m["type"], m["plan_id"], m["step_id"], m["tool"])
            m["payload"] = column_keys.restore(m["payload"], omitted, columns)
        if ref is not None:
            wanted.append((m, ref))
        found.append(m)
    if wanted:
        docs = contexts.documents({ref for _, ref in wanted})
        for m, ref in wanted:
            doc = docs.get(ref)
            m["payload"][CONTEXT_KEY] = None if doc is None else dict(doc)
    return [StoredEvent(**m) for m in found]


class Reader:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.contexts = Contexts(engine)

    def read_after(self, position: int, limit: int = 1000) -> list[StoredEvent]:
        query = _SELECT.where(events.c.position > position).order_by(events.c.position)
        with translate_errors("read events"), self.engine.connect() as conn:
            return _events(self.contexts, conn.execute(query.limit(limit)))

    def iter_all(self, after: int = 0, batch: int = 5000) -> Iterator[StoredEvent]:
        while True:
            chunk = self.read_after(after, batch)
            if not chunk:
                return
            yield from chunk
            after = chunk[-1].position

    def run_events(self, run_id: str) -> list[StoredEvent]:
        query = _SELECT.where(events.c.run_id == run_id).order_by(events.c.seq)
        with translate_errors("read run"), self.engine.connect() as conn:
            return _events(self.contexts, conn.execute(query))

    def read_runs_until(self, run_ids: list[str], position: int) -> list[StoredEvent]:
        """Every event of the given runs at or below *position*, in global order.

        Projections fold a run from its whole stored prefix; below a checkpoint every position
        is final (appends are serialised), so this never misses an event.
        """
        if not run_ids or position <= 0:
            return []
        found: list[StoredEvent] = []
        with translate_errors("read runs"), self.engine.connect() as conn:
            for start in range(0, len(run_ids), 400):  # far below SQLite's variable limit
                query = _SELECT.where(
                    events.c.run_id.in_(run_ids[start : start + 400]),
                    events.c.position <= position,
                )
                found.extend(_events(self.contexts, conn.execute(query)))
        found.sort(key=lambda e: e.position)
        return found

    def existing_runs(self, run_ids: list[str]) -> set[str]:
        """Which of these run ids have stored events."""
        found: set[str] = set()
        with translate_errors("read runs"), self.engine.connect() as conn:
            if conn.dialect.name == "postgresql":  # one statement, however many runs
                rows = conn.execute(STORED_RUNS, {"runs": run_ids})
                return {str(r[0]) for r in rows}
            for start in range(0, len(run_ids), 400):
                query = sa.select(events.c.run_id).where(
                    events.c.run_id.in_(run_ids[start : start + 400])
                )
                found.update(conn.execute(query.distinct()).scalars())
        return found

    def stored_heads(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], StoredHead]:
        """The content hash and indexed columns of the stored events at these keys."""
        found: dict[tuple[str, int], StoredHead] = {}
        cols = (events.c.content_hash, events.c.type, events.c.plan_id, events.c.step_id)
        with translate_errors("read events"), self.engine.connect() as conn:
            for start in range(0, len(keys), 400):
                rows = conn.execute(
                    sa.select(events.c.run_id, events.c.seq, *cols, events.c.tool).where(
                        sa.tuple_(events.c.run_id, events.c.seq).in_(keys[start : start + 400])
                    )
                )
                found.update(
                    {
                        (r.run_id, r.seq): StoredHead(
                            r.content_hash, r.type, r.plan_id, r.step_id, r.tool
                        )
                        for r in rows
                    }
                )
        return found

    def max_position(self) -> int:
        with translate_errors("read events"), self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.max(events.c.position))).scalar() or 0)

    def stats(self) -> dict[str, Any]:
        with translate_errors("read stats"), self.engine.connect() as conn:
            by_type = {
                r.type: r.n
                for r in conn.execute(
                    sa.select(events.c.type, sa.func.count().label("n"))
                    .group_by(events.c.type)
                    .order_by(events.c.type)
                )
            }
            by_source = {
                r.source: r.n
                for r in conn.execute(
                    sa.select(events.c.source, sa.func.count().label("n")).group_by(events.c.source)
                )
            }
            # runner runs only: tracelake's own decision events (source "tracelake", run
            # "suggestion:<id>") share the log but are not runs
            runs = conn.execute(
                sa.select(sa.func.count(sa.distinct(events.c.run_id))).where(
                    events.c.source != TRACELAKE_SOURCE
                )
            ).scalar()
            bounds = conn.execute(
                sa.select(sa.func.min(events.c.recorded_at), sa.func.max(events.c.recorded_at))
            ).one()
            by_reason = {
                r.reason: r.n
                for r in conn.execute(
                    sa.select(quarantine.c.reason, sa.func.count().label("n"))
                    .group_by(quarantine.c.reason)
                    .order_by(quarantine.c.reason)
                )
            }
        return {
            "events": sum(by_type.values()),
            "runs": int(runs or 0),
            "events_by_type": by_type,
            "events_by_source": by_source,
            "first_recorded_at": _iso(bounds[0]),
            "last_recorded_at": _iso(bounds[1]),
            "quarantined": sum(by_reason.values()),
            "quarantined_by_reason": by_reason,
        }


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()


# Which of :runs have a stored event (PostgreSQL): each partition's run index searched for all
# of them at once (a bitmap scan of = ANY; measured faster than an EXISTS probe per run, and
# than IN lists of 400).
# Which of :runs have a stored event (PostgreSQL): one index probe per run, LIMIT 1. The plain
# "SELECT DISTINCT run_id ... WHERE run_id = ANY(:runs)" became a parallel sequential scan of
# the partition once a bulk load outran autovacuum's ANALYZE (no statistics: 214 run ids read
# as a third of the table), 13 ms -> 207 ms per batch from 20k to 430k events; the lateral
# LIMIT 1 keeps the nested loop of index probes whatever the statistics say.
STORED_RUNS = sa.text(
    "SELECT DISTINCT r.run_id FROM unnest(CAST(:runs AS text[])) AS r(run_id),"
    " LATERAL (SELECT 1 FROM events e WHERE e.run_id = r.run_id LIMIT 1) AS hit"
)
