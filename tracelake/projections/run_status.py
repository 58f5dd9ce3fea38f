"""``runs``: one row per run — status in seed 000's UI grouping, plan ids, times, counts.

The only per-run row that changes while a run goes on: replaced for every run a batch touches
(one delete and one insert per touched run and batch, whatever the run's length).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.runner import Projection, delete_runs, insert
from tracelake.runners.run_model import RunFold
from tracelake.store.schema import runs as runs_table

COUNTS = (
    "step_count",
    "retry_count",
    "skip_count",
    "repair_count",
    "coercion_count",
    "binding_repair_count",
)  # the same names as learning_records.COUNTS


def run_row(run: RunFold) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "source": run.source,
        "collection_id": run.collection_id,
        "status": run.status,
        "finished": run.finished,
        "success": run.success,
        "plan_ids": run.plan_ids,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "last_event_type": run.last_event.type,
        "event_count": run.event_count,
        **{c: getattr(run, c) for c in COUNTS},
        "total_duration_ms": run.total_duration_ms,
        "last_position": run.last_event.position,
    }


class RunsProjection(Projection):
    name = "runs"
    tables: ClassVar[tuple[sa.Table, ...]] = (runs_table,)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        delete_runs(conn, runs_table, [r.run_id for r in runs])
        insert(conn, runs_table, [run_row(r) for r in runs])
