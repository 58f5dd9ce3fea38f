"""``binding_repair_evidence`` and its aggregate ``binding_repair_candidates``.

One evidence row per ``binding.repaired`` (step, the step's tool, field_name, recovered_path,
scrubbed value preview, always low confidence), with whether the run then completed (NULL
while the run is open). The aggregate per (collection, tool, field_name, recovered_path)
counts observations, successes and failures and carries a promotion status; it is recomputed
from the evidence rows of the keys a batch touched, in the same transaction, so it can never
drift from them.

Status (graph-tool-call's default promotion policy): ``promotable`` after at least
``MIN_SUCCESSES`` completed runs with a failure ratio of at most ``MAX_FAILURE_RATIO``, else
``suggested``. ``promoted`` / ``rejected`` are operator decisions; nothing in the log records
them yet, so this projection does not produce them.
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

MIN_SUCCESSES = 2
MAX_FAILURE_RATIO = 0.5
Key = tuple[str, str, str, str]
_KEY_COLS = ("collection_id", "tool", "field_name", "recovered_path")


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _rows(run: RunFold) -> list[dict[str, Any]]:
    completed = run.success if run.finished else None
    rows = []
    for e in run.bindings:
        p = e.payload
        plan_id, step_id = _s(p.get("plan_id")), _s(p.get("step_id"))
        rows.append(
            {
                "position": e.position,
                "run_id": run.run_id,
                "collection_id": run.collection_id,
                "plan_id": plan_id,
                "step_id": step_id,
                "tool": _s(p.get("tool")) or run.tool_of(plan_id, step_id),
                "field_name": _s(p.get("field_name")),
                "recovered_path": _s(p.get("recovered_path")),
                "value_preview": p.get("value_preview"),
                "low_confidence": True,
                "run_completed": completed,
                "recorded_at": e.recorded_at,
            }
        )
    return rows


def _key(row: Any) -> Key:
    m = row if isinstance(row, dict) else row._mapping
    return (
        m["collection_id"] or "",
        m["tool"] or "",
        m["field_name"] or "",
        m["recovered_path"] or "",
    )


def status_of(successes: int, failures: int) -> str:
    total = successes + failures
    if successes >= MIN_SUCCESSES and failures <= MAX_FAILURE_RATIO * total:
        return "promotable"
    return "suggested"


class BindingRepairEvidenceProjection(Projection):
    name = "binding_repair_evidence"
    tables: ClassVar[tuple[sa.Table, ...]] = (evidence, candidates)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        run_ids = [r.run_id for r in runs if r.binding_repair_count]
        touched: set[Key] = set()
        for start in range(0, len(run_ids), 400):
            chunk = run_ids[start : start + 400]
            old = conn.execute(
                sa.select(*(evidence.c[c] for c in _KEY_COLS)).where(evidence.c.run_id.in_(chunk))
            )
            touched.update(_key(r) for r in old)
            conn.execute(evidence.delete().where(evidence.c.run_id.in_(chunk)))
        rows = [row for run in runs for row in _rows(run)]
        insert(conn, evidence, rows)
        touched.update(_key(r) for r in rows)
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
                        "status": status_of(int(r.successes or 0), int(r.failures or 0)),
                    }
                    for r in grouped
                ],
            )
