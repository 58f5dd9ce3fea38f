"""``learning_records``: one compact record per finished run (seed 002: "learning record는
plan.completed와 plan.aborted에서 생성합니다"); agentlane: the root ``agent_end`` (no result =
failure).

The query family and fingerprint are graph-tool-call's own (``normalize_query_family`` and
``stable_hash`` in ``graph_tool_call.learning``, re-implemented here because graph-tool-call is
an optional dependency; a test checks they agree). The goal is the *scrubbed* goal, so a goal
with personal data is grouped on its scrubbed form and a goal without equals the runner's.

Promotion status: ``not_eligible`` for a failed run; a successful run is ``promotable`` when
its (collection, fingerprint, selected target) has at least two successes and at most half of
the fingerprint's runs failed (graph-tool-call's default policy), else ``suggested``. It is
recomputed for every touched (collection, fingerprint) group in the same transaction.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.binding_repair_evidence import status_of
from tracelake.projections.engine import Projection, delete_runs, insert
from tracelake.projections.fold import RunFold
from tracelake.projections.runs import COUNTS
from tracelake.store.schema import learning_records as records


def normalize_query_family(query: str) -> str:
    """graph_tool_call.learning.normalize_query_family (0.47), verbatim."""
    text = str(query or "").strip().lower()
    text = re.sub(r"[\w.+-]+@[\w.-]+", " ", text)
    text = re.sub(r"\b\d{2,}\b", " <num> ", text)
    text = re.sub(r"\s+", " ", re.sub(r"[\W_]+", " ", text, flags=re.UNICODE)).strip()
    return text


def stable_hash(value: str) -> str:
    """graph_tool_call.learning.stable_hash (0.47), verbatim."""
    return hashlib.sha256(str(value or "").encode("utf-8")).hexdigest()[:16]


def record_of(run: RunFold) -> dict[str, Any]:
    family = normalize_query_family(run.goal) if run.goal is not None else None
    outcome = run.outcome
    return {
        "run_id": run.run_id,
        "source": run.source,
        "collection_id": run.collection_id,
        "plan_ids": run.plan_ids,
        "goal": run.goal,
        "query_family": family,
        "query_fingerprint": stable_hash(family) if family is not None else None,
        "selected_target": run.selected_target,
        "plan_tools": run.tools,
        "success": bool(run.success),
        "failure_stage": outcome.stage if outcome else None,
        "failure_reason": outcome.reason if outcome else None,
        "failed_step": run.failed_step,
        "failed_tool": run.failed_tool,
        "total_duration_ms": run.total_duration_ms,
        **{c: getattr(run, c) for c in COUNTS},
        "engine_version": run.engine_version,
        "finished_at": run.ended_at,
        "promotion_status": "not_eligible",
    }


class LearningRecordsProjection(Projection):
    name = "learning_records"
    tables: ClassVar[tuple[sa.Table, ...]] = (records,)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        delete_runs(conn, records, [r.run_id for r in runs])
        rows = [record_of(r) for r in runs if r.finished]
        insert(conn, records, rows)
        groups = {(r["collection_id"], r["query_fingerprint"]) for r in rows}
        for collection_id, fingerprint in sorted(groups, key=str):
            self._promote(conn, collection_id, fingerprint)

    @staticmethod
    def _promote(conn: Connection, collection_id: str | None, fingerprint: str | None) -> None:
        where = sa.and_(
            records.c.collection_id.is_(None)
            if collection_id is None
            else records.c.collection_id == collection_id,
            records.c.query_fingerprint.is_(None)
            if fingerprint is None
            else records.c.query_fingerprint == fingerprint,
        )
        group = conn.execute(
            sa.select(records.c.run_id, records.c.success, records.c.selected_target).where(where)
        ).all()
        failures = sum(1 for g in group if not g.success)
        by_target: dict[str | None, list[str]] = {}
        for g in group:
            if g.success:
                by_target.setdefault(g.selected_target, []).append(g.run_id)
        for target, run_ids in by_target.items():
            status = status_of(len(run_ids), failures)
            if status != "not_eligible":
                conn.execute(
                    records.update()
                    .where(where, records.c.success.is_(True))
                    .where(
                        records.c.selected_target.is_(None)
                        if target is None
                        else records.c.selected_target == target
                    )
                    .values(promotion_status=status)
                )
