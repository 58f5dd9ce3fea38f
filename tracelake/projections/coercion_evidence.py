"""``coercion_evidence``: one row per change of an ``args.coerced`` event (enum-mapping and
cast candidates): field, rule (``cast``/``enum``), scrubbed from/to, unresolved fields. An
``args.coerced`` with no change but unresolved fields gets one row with rule ``unresolved``.
Rows are fixed when their event is folded and inserted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.runner import Projection, insert
from tracelake.runners.run_model import RunFold
from tracelake.store.schema import coercion_evidence


def _rows(run: RunFold) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for seen in run.coercions:
        e, p = seen.event, seen.event.payload
        raw_unresolved, raw_changes = p.get("unresolved"), p.get("changes")
        unresolved: list[Any] = raw_unresolved if isinstance(raw_unresolved, list) else []
        changes: list[Any] = raw_changes if isinstance(raw_changes, list) else []
        base = {
            "position": e.position,
            "run_id": run.run_id,
            "collection_id": seen.collection_id,
            "plan_id": e.plan_id,
            "step_id": e.step_id,
            "tool": e.tool,
            "unresolved": unresolved,
            "recorded_at": e.recorded_at,
        }
        for i, change in enumerate(c for c in changes if isinstance(c, dict)):
            field_name = change.get("field")
            rule = change.get("rule")
            rows.append(
                {
                    **base,
                    "change_index": i,
                    "field_name": field_name if isinstance(field_name, str) else None,
                    "rule": rule if isinstance(rule, str) else None,
                    "from_value": change.get("from"),
                    "to_value": change.get("to"),
                }
            )
        if not changes and unresolved:
            rows.append(
                {**base, "change_index": 0, "field_name": None, "rule": "unresolved"}
                | {"from_value": None, "to_value": None}
            )
    return rows


class CoercionEvidenceProjection(Projection):
    name = "coercion_evidence"
    tables: ClassVar[tuple[sa.Table, ...]] = (coercion_evidence,)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        insert(conn, coercion_evidence, [row for run in runs for row in _rows(run)])
