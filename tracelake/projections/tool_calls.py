"""``tool_calls``: one row per tool attempt that ended (ok or not), feeding ``v_tool_latency``.

graph-tool-call: ``step.completed`` (ok, duration), ``step.failed`` / ``step.skipped`` /
``step.retrying`` (a failed attempt; binding failures are left out: the tool was never
called), and the failed step of ``plan.repaired``. agentlane: ``tool_end`` (its ``ok``; no
duration is in the event). A row is fixed when its event is folded and inserted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.runner import Projection, insert
from tracelake.runners.run_model import RunFold
from tracelake.store.schema import tool_calls


class ToolCallsProjection(Projection):
    name = "tool_calls"
    tables: ClassVar[tuple[sa.Table, ...]] = (tool_calls,)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        insert(
            conn,
            tool_calls,
            [
                {
                    "position": c.event.position,
                    "run_id": run.run_id,
                    "source": run.source,
                    "collection_id": c.collection_id,
                    "step_id": c.step_id,
                    "tool": c.tool,
                    "ok": c.ok,
                    "duration_ms": c.duration_ms,
                }
                for run in runs
                for c in run.tool_calls
            ],
        )
