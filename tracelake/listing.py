"""What ``tracelake runs list`` and ``tracelake quarantine list|show`` read.

Runs are listed from the log itself (always current); their status comes from the ``runs``
projection, which is only as fresh as the last ``tracelake project``: ``RunListing.behind``
says how many events the projection has not seen yet, so the command can say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from tracelake.store import Store
from tracelake.store.schema import events, projection_checkpoints, quarantine, runs


@dataclass
class RunListing:
    runs: list[dict[str, Any]] = field(default_factory=list)
    behind: int = 0  # events above the runs projection's checkpoint


def list_runs(
    store: Store,
    *,
    collection: str | None = None,
    status: str | None = None,
    limit: int = 50,
) -> RunListing:
    """Newest runs first (by their last event's position)."""
    grouped = (
        sa.select(
            events.c.run_id,
            sa.func.min(events.c.source).label("source"),
            sa.func.max(events.c.collection_id).label("collection_id"),
            sa.func.count().label("events"),
            sa.func.min(events.c.recorded_at).label("first_recorded_at"),
            sa.func.max(events.c.recorded_at).label("last_recorded_at"),
            sa.func.max(events.c.position).label("last_position"),
        )
        .group_by(events.c.run_id)
        .subquery()
    )
    query = sa.select(grouped, runs.c.status, runs.c.last_event_type).join(
        runs, runs.c.run_id == grouped.c.run_id, isouter=True
    )
    if collection is not None:
        query = query.where(grouped.c.collection_id == collection)
    if status is not None:
        query = query.where(sa.func.lower(runs.c.status) == status.lower())
    query = query.order_by(grouped.c.last_position.desc()).limit(limit)
    with store.reading("list runs") as conn:
        rows = [dict(r._mapping) for r in conn.execute(query)]
        top = conn.execute(sa.select(sa.func.max(events.c.position))).scalar() or 0
        mark = conn.execute(
            sa.select(projection_checkpoints.c.position).where(
                projection_checkpoints.c.name == "runs"
            )
        ).scalar()
    for r in rows:
        r["first_recorded_at"] = _iso(r["first_recorded_at"])
        r["last_recorded_at"] = _iso(r["last_recorded_at"])
    return RunListing(rows, max(int(top) - int(mark or 0), 0))


def list_quarantine(
    store: Store,
    *,
    reason: str | None = None,
    origins: tuple[str, ...] | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """Newest quarantined lines first, without their previews."""
    query = sa.select(
        quarantine.c.id,
        quarantine.c.recorded_at,
        quarantine.c.reason,
        quarantine.c.origin,
        quarantine.c.line_no,
        quarantine.c.event_type,
        quarantine.c.run_id,
        quarantine.c.detail,
    )
    if reason is not None:
        query = query.where(quarantine.c.reason == reason)
    if origins is not None:
        query = query.where(quarantine.c.origin.in_(origins))
    query = query.order_by(quarantine.c.id.desc()).limit(limit)
    with store.reading("list quarantine") as conn:
        rows = [dict(r._mapping) for r in conn.execute(query)]
    for r in rows:
        r["recorded_at"] = _iso(r["recorded_at"])
    return rows


def get_quarantined(store: Store, item_id: int) -> dict[str, Any] | None:
    """One quarantine row with its (scrubbed) preview; never the raw line."""
    query = sa.select(*[c for c in quarantine.c if c.name != "dedupe_key"]).where(
        quarantine.c.id == item_id
    )
    with store.reading("read a quarantined item") as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    found = dict(row._mapping)
    found["recorded_at"] = _iso(found["recorded_at"])
    return found


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):  # SQLite aggregates return text
        return value
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
