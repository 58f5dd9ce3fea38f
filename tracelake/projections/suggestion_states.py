"""``suggestions``: the current state of every suggestion, projected from its decision events.

A suggestion's events (run ``suggestion:<id>``, source ``tracelake``; see
``tracelake.promotion.decisions``) each carry the suggestion as it is after the event, so its
row is its last event's snapshot; ``version`` is the number of events in its history. Rebuilding
the projections from the log reproduces every status.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.runner import DECISIONS_SOURCE, Projection, insert
from tracelake.runners.run_model import RunFold
from tracelake.store.schema import suggestions

PREFIX = "suggestion:"


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def row_of(run: RunFold) -> dict[str, Any] | None:
    payload = run.last_event.payload
    doc = payload.get("suggestion")
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
        return None
    return {
        "id": doc["id"],
        "type": str(doc.get("type") or ""),
        "collection_id": str(doc.get("collection_id") or ""),
        "query_family": doc.get("query_family"),
        "query_fingerprint": doc.get("query_fingerprint"),
        "target": doc.get("target"),
        "status": str(doc.get("status") or "suggested"),
        "observations": _int(doc.get("observations")),
        "prior_failure_count": _int(doc.get("prior_failure_count")),
        "document": doc,
        "version": run.event_count,
        "decided_by": doc.get("decided_by"),
        "reason": doc.get("decision_reason"),
        "updated_at": run.last_event.recorded_at,
        "last_position": run.last_event.position,
    }


class SuggestionsProjection(Projection):
    name = "suggestions"
    tables: ClassVar[tuple[sa.Table, ...]] = (suggestions,)

    def accepts(self, run: RunFold) -> bool:
        return run.source == DECISIONS_SOURCE and run.run_id.startswith(PREFIX)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        rows = [row for row in map(row_of, runs) if row is not None]
        ids = [r.run_id[len(PREFIX) :] for r in runs]
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            conn.execute(suggestions.delete().where(suggestions.c.id.in_(chunk)))
        insert(conn, suggestions, rows)
