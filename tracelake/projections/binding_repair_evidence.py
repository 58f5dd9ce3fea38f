"""``binding_repair_evidence`` and its aggregate ``binding_repair_candidates``.

One evidence row per ``binding.repaired`` (step, the step's tool, field_name, recovered_path,
scrubbed value preview, always low confidence), with whether the run then completed (NULL
while the run is open). A row is inserted once, when its event is folded; ``run_completed`` is
set once, when the run finishes. The aggregate per (collection, tool, field_name,
recovered_path) counts observations, successes and failures; each batch adds what its rows
add (an upsert of sums, and the successes/failures of repairs whose run ended), in the same
transaction as the rows, so it cannot drift from them and costs O(batch), not O(evidence).

No promotion status is stored here: ``v_binding_repair_evidence`` reads it from the suggestion
decisions (``suggestions``), their one source of truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.engine import Projection, insert
from tracelake.projections.fold import RunFold
from tracelake.store.dialects import conflict_insert
from tracelake.store.schema import binding_repair_candidates as candidates
from tracelake.store.schema import binding_repair_evidence as evidence

Key = tuple[str, str, str, str]
_KEY_COLS = ("collection_id", "tool", "field_name", "recovered_path")


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _rows(run: RunFold) -> list[dict[str, Any]]:
    completed = run.success if run.finished else None
    rows = []
    for seen in run.bindings:
        e, p = seen.event, seen.event.payload
        rows.append(
            {
                "position": e.position,
                "run_id": run.run_id,
                "collection_id": seen.collection_id,
                "plan_id": _s(p.get("plan_id")),
                "step_id": _s(p.get("step_id")),
                "tool": seen.tool,
                "field_name": _s(p.get("field_name")),
                "recovered_path": _s(p.get("recovered_path")),
                "value_preview": p.get("value_preview"),
                "low_confidence": True,
                "run_completed": completed,
                "recorded_at": e.recorded_at,
            }
        )
    return rows


def _key(m: dict[str, Any]) -> Key:
    return (
        m["collection_id"] or "",
        m["tool"] or "",
        m["field_name"] or "",
        m["recovered_path"] or "",
    )


class BindingRepairEvidenceProjection(Projection):
    name = "binding_repair_evidence"
    tables: ClassVar[tuple[sa.Table, ...]] = (evidence, candidates)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        rows = [row for run in runs for row in _rows(run)]
        insert(conn, evidence, rows)
        added: dict[Key, Delta] = {}
        for r in rows:
            added.setdefault(_key(r), Delta()).add(r["run_completed"], r["recorded_at"])
        completed: dict[Key, Delta] = {}
        for run in runs:
            if run.finished_now and run.binding_keys:
                # rows inserted by earlier batches learn how their run ended (once)
                done = conn.execute(
                    evidence.update()
                    .where(evidence.c.run_id == run.run_id, evidence.c.run_completed.is_(None))
                    .values(run_completed=bool(run.success))
                    .returning(*(evidence.c[c] for c in _KEY_COLS), evidence.c.run_completed)
                )
                for hit in done:
                    m = dict(hit._mapping)
                    completed.setdefault(_key(m), Delta()).add(m["run_completed"])
        _upsert(conn, added)
        for key, d in sorted(completed.items()):
            conn.execute(
                candidates.update()
                .where(*(candidates.c[c] == v for c, v in zip(_KEY_COLS, key, strict=True)))
                .values(
                    successes=candidates.c.successes + d.successes,
                    failures=candidates.c.failures + d.failures,
                )
            )


@dataclass
class Delta:
    """What a batch adds to one candidate: counts are sums, so any batching gives the totals
    a rebuild gives."""

    observations: int = 0
    successes: int = 0
    failures: int = 0
    first: datetime | None = None
    last: datetime | None = None

    def add(self, completed: bool | None, at: datetime | None = None) -> None:
        self.observations += 1
        self.successes += completed is True
        self.failures += completed is False
        if at is not None:
            self.first = at if self.first is None else min(self.first, at)
            self.last = at if self.last is None else max(self.last, at)


def _upsert(conn: Connection, added: dict[Key, Delta]) -> None:
    if not added:
        return
    values = [
        {
            **dict(zip(_KEY_COLS, key, strict=True)),
            "observations": d.observations,
            "successes": d.successes,
            "failures": d.failures,
            "first_seen_at": d.first,
            "last_seen_at": d.last,
        }
        for key, d in sorted(added.items())
    ]
    for start in range(0, len(values), 500):
        stmt = conflict_insert(conn, candidates).values(values[start : start + 500])
        new, c = stmt.excluded, candidates.c
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=list(_KEY_COLS),
                set_={
                    "observations": c.observations + new.observations,
                    "successes": c.successes + new.successes,
                    "failures": c.failures + new.failures,
                    "first_seen_at": sa.case(
                        (new.first_seen_at < c.first_seen_at, new.first_seen_at),
                        else_=c.first_seen_at,
                    ),
                    "last_seen_at": sa.case(
                        (new.last_seen_at > c.last_seen_at, new.last_seen_at),
                        else_=c.last_seen_at,
                    ),
                },
            )
        )
