"""``failure_taxonomy``: one row per failure, classified by ``runners.failure_reasons``.

Failures: ``step.failed``, each failed attempt before a ``step.retrying``, the error of a
``step.skipped``, ``plan.aborted``; agentlane ``tool_end`` with ``ok`` false and a root run
that ended without a result. A failure that matches no rule is stored as ``unknown``. ``detail``
is the finer, stable sub-code of the reason (``runners.binding_causes``). A row is fixed
when its event is folded and inserted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.runner import Projection, insert
from tracelake.runners.run_model import RunFold
from tracelake.store.schema import failure_taxonomy


class FailureTaxonomyProjection(Projection):
    name = "failure_taxonomy"
    tables: ClassVar[tuple[sa.Table, ...]] = (failure_taxonomy,)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
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
                    "operator_action": f.classification.operator_action,
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
