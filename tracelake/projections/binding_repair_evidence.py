"""``binding_repair_evidence`` and its aggregate ``binding_repair_candidates``.

One evidence row per ``binding.repaired`` (step, the step's tool, field_name, recovered_path,
scrubbed value preview, always low confidence), with whether the run then completed (NULL
while the run is open). A row is inserted once, when its event is folded; ``run_completed`` is
set once, when the run finishes. The aggregate per (collection, tool, field_name,
recovered_path) counts observations, successes and failures; it is recounted from the evidence
rows of the keys a batch touched, in the same transaction, so it can never drift from them.

No promotion status is stored here: ``v_binding_repair_evidence`` reads it from the suggestion
decisions (``suggestions``), their one source of truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.engine import Projection, insert
from tracelake.projections.fold import RunFold
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
        touched: set[Key] = {_key(r) for r in rows}
        for run in runs:
            if run.finished_now and run.binding_keys:
                conn.execute(
                    evidence.update()
                    .where(evidence.c.run_id == run.run_id, evidence.c.run_completed.is_(None))
                    .values(run_completed=bool(run.success))
                )
                touched.update(run.binding_keys)
        if touched:
            self._recount(conn, sorted(touched))

    @staticmethod
    def _recount(conn: Connection, keys: list[Key]) -> None:
        cols = [sa.func.coalesce(evidence.c[c], "").label(c) for c in _KEY_COLS]
        for start in range(0, len(keys), 100):
            chunk = keys[start : start + 100]
            conn.execute(
                candidates.delete().where(
                    sa.tuple_(*(candidates.c[c] for c in _KEY_COLS)).in_(chunk)
                )
            )
            done = sa.case((evidence.c.run_completed.is_(True), 1), else_=0)
            failed = sa.case((evidence.c.run_completed.is_(False), 1), else_=0)
            grouped = conn.execute(
                sa.select(
                    *cols,
                    sa.func.count().label("observations"),
                    sa.func.sum(done).label("successes"),
                    sa.func.sum(failed).label("failures"),
                    sa.func.min(evidence.c.recorded_at).label("first_seen_at"),
                    sa.func.max(evidence.c.recorded_at).label("last_seen_at"),
                )
                .where(sa.tuple_(*cols).in_(chunk))
                .group_by(*cols)
            )
            insert(
                conn,
                candidates,
                [
                    {
                        **r._mapping,
                        "successes": int(r.successes or 0),
                        "failures": int(r.failures or 0),
                    }
                    for r in grouped
                ],
            )
