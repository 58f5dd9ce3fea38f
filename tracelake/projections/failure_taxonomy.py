"""``failure_taxonomy``: one row per failure, classified by ``runners.failure_reasons``.

Failures: ``step.failed``, each failed attempt before a ``step.retrying``, the error of a
``step.skipped``, ``plan.aborted``; agentlane ``tool_end`` with ``ok`` false and a root run
that ended without a result. A failure that matches no rule is stored as ``unknown``. ``detail``
is the finer, stable sub-code of the reason (``runners.binding_causes``). A row is fixed
when its event is folded and inserted once. The operator action of each reason is stored
once, in ``failure_actions`` (``v_failure_taxonomy`` joins it back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.runner import Projection, insert
from tracelake.runners.run_model import RunFold
from tracelake.store.schema import failure_actions, failure_taxonomy


class FailureTaxonomyProjection(Projection):
    name = "failure_taxonomy"
    tables: ClassVar[tuple[sa.Table, ...]] = (failure_taxonomy, failure_actions)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        actions = {
            f.classification.reason: f.classification.operator_action
            for run in runs
            for f in run.failures
        }
        if actions:  # a few rows a batch, written again so they follow the running code
            reasons = sorted(actions)
            conn.execute(failure_actions.delete().where(failure_actions.c.reason.in_(reasons)))
            insert(
                conn,
                failure_actions,
                [{"reason": r, "operator_action": actions[r]} for r in reasons],
            )
        insert(
            conn,
            failure_taxonomy,
            [
                {
                    "position": f.event.position,
                    "run_id": run.run_id,
                    "source": run.source,
                    "event_type": f.event.type,
                    "collection_id": f.collection_id,
                    "plan_id": f.plan_id,
                    "step_id": f.step_id,
                    "tool": f.tool,
                    "stage": f.classification.stage,
                    "reason": f.classification.reason,
                    "detail": f.classification.detail,
                    "retryable": f.classification.retryable,
                    "http_status": f.classification.http_status,
                    "exception_type": f.classification.exception_type,
                    "error_kind": f.classification.error_kind,
                    "field_name": f.field_name,
                    "attempt": f.attempt,
                    "recorded_at": f.event.recorded_at,
                }
                for run in runs
                for f in run.failures
            ],
        )
