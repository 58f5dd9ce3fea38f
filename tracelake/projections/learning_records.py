"""``learning_records``: one compact record per finished run (seed 002: "learning record는
plan.completed와 plan.aborted에서 생성합니다"); agentlane: the root ``agent_end`` (no result =
failure).

A record is a fact: it is frozen at the event that finished the run (``position``), inserted
once and never updated; events after the finish do not change it. The query family and
fingerprint are graph-tool-call's (``tracelake.learning``), computed on the *scrubbed* goal; a
runner gets the same fingerprint for its raw goal through ``tracelake.learning.learning_query``.

There is no promotion status here: it has one source of truth, the suggestion decisions in the
log (projected into ``suggestions``) made by the policy (``pipelines.promotion_policy``) or an operator.
``v_learning_records`` reads it from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.learning import fingerprint, query_family
from tracelake.projections.runner import Projection, insert
from tracelake.runners.run_model import RunFold
from tracelake.store.schema import learning_records as records

COUNTS = (
    "step_count",
    "retry_count",
    "skip_count",
    "repair_count",
    "coercion_count",
    "binding_repair_count",
)


def record_of(run: RunFold) -> dict[str, Any]:
    """The record of a run as it is now (the fold calls this once, at the finishing event)."""
    family = query_family(run.goal)
    outcome = run.outcome
    return {
        "run_id": run.run_id,
        "position": run.last_event.position,
        "source": run.source,
        "collection_id": run.collection_id,
        "plan_ids": list(run.plan_ids),
        "goal": run.goal,
        "query_family": family,
        "query_fingerprint": fingerprint(family),
        "selected_target": run.selected_target,
        "plan_tools": list(run.tools),
        "success": bool(run.success),
        "failure_stage": outcome.stage if outcome else None,
        "failure_reason": outcome.reason if outcome else None,
        "failed_step": run.failed_step,
        "failed_tool": run.failed_tool,
        "total_duration_ms": run.total_duration_ms,
        **{c: getattr(run, c) for c in COUNTS},
        "engine_version": run.engine_version,
        "finished_at": run.ended_at,
    }


class LearningRecordsProjection(Projection):
    name = "learning_records"
    tables: ClassVar[tuple[sa.Table, ...]] = (records,)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        insert(conn, records, [r.record for r in runs if r.finished_now and r.record is not None])
