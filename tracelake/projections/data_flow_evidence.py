"""``data_flow_evidence``: observed field flow between the tools of a graph-tool-call run.

One row per step argument whose value is seen in an earlier step's output, or that a
``binding.repaired`` recovered (see ``runners.graph_tool_call_flow`` for the rules). Rows are
fixed when their ``step.started`` is folded (only the events before it count), so they are
inserted once and never rewritten; flows are observed up to the run's end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.runner import Projection, insert
from tracelake.runners.run_model import RunFold
from tracelake.store.schema import data_flow_evidence


class DataFlowEvidenceProjection(Projection):
    name = "data_flow_evidence"
    tables: ClassVar[tuple[sa.Table, ...]] = (data_flow_evidence,)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        insert(conn, data_flow_evidence, [row for run in runs for row in run.flows])
