"""PostgreSQL: ``events`` is partitioned by ``recorded_at``, one partition per calendar month (UTC).

Why: retention removes old events by detaching and dropping whole partitions (no row-by-row
DELETE, no bloat), and a month is the unit operators reason about. A ``DEFAULT`` partition takes
anything outside the prepared months (a clock far off, a very old spool replayed), so an append
never fails for want of a partition; ``tracelake db partitions`` (run by the owner, e.g. monthly
from cron, and by ``db roles`` and ``retention apply``) prepares the months ahead.

Unique constraints on a partitioned table must contain the partition key, so ``(run_id, seq)``
and ``(run_id, event_id)`` are plain indexes here: their uniqueness is enforced by the appender
under the append lock (``store.appender``, invariant 3), which looks keys up across all
partitions before it writes. The same event re-sent a month later lands nowhere (tested).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

DEFAULT_PARTITION = "events_default"
MONTHS_AHEAD = 12

TRUNCATE_TRIGGER = (
    "CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON {table}"
    " FOR EACH STATEMENT EXECUTE FUNCTION tracelake_events_append_only()"
)


@dataclass(frozen=True, slots=True)
class Partition:
    name: str
    start: datetime | None  # None: the DEFAULT partition
    end: datetime | None


def month_start(t: datetime) -> datetime:
    t = t.astimezone(UTC)
    return datetime(t.year, t.month, 1, tzinfo=UTC)


def next_month(t: datetime) -> datetime:
    return datetime(t.year + (t.month == 12), t.month % 12 + 1, 1, tzinfo=UTC)


def partition_name(start: datetime) -> str:
    return f"events_p{start.year:04d}_{start.month:02d}"


def is_partitioned(conn: Connection) -> bool:
    if conn.dialect.name != "postgresql":
        return False
    return bool(
        conn.execute(
            sa.text("SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass('events')")
        ).scalar()
    )


def partitions(conn: Connection) -> list[Partition]:
    """The partitions of ``events``, oldest first, the DEFAULT one last."""
    rows = conn.execute(
        sa.text(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
            " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass"
        )
    ).all()
    found: list[Partition] = []
    for name, bound in rows:
        if bound == "DEFAULT":
            found.append(Partition(name, None, None))
            continue
        low, high = (part.split("'")[1] for part in bound.split(" TO "))
        found.append(Partition(name, _ts(low), _ts(high)))
    found.sort(key=lambda p: (p.start is None, p.start or datetime.min.replace(tzinfo=UTC)))
    return found


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def ensure_months(conn: Connection, first: datetime, until: datetime | None = None) -> list[str]:
    """Create the monthly partitions from *first*'s month to *until* (default: 12 months
    ahead). Rows of a new month already in the DEFAULT partition are moved into it. Owner only.
    """
    until = until or _months_later(datetime.now(UTC), MONTHS_AHEAD)
    existing = {p.name for p in partitions(conn)}
    created: list[str] = []
    start = month_start(first)
    while start <= until:
        end = next_month(start)
        name = partition_name(start)
        if name not in existing:
            _create(conn, name, start, end)
            created.append(name)
        start = end
    return created


def _create(conn: Connection, name: str, start: datetime, end: datetime) -> None:
    bounds = {"start": start, "end": end}
    stray = conn.execute(
        sa.text(
            f"SELECT count(*) FROM {DEFAULT_PARTITION}"
            " WHERE recorded_at >= :start AND recorded_at < :end"
        ),
        bounds,
    ).scalar()
    if stray:
        # A partition cannot be added while the DEFAULT one holds rows of its range: detach
        # the default, give the rows their month, attach it again (all in this transaction).
        conn.execute(sa.text(f"ALTER TABLE events DETACH PARTITION {DEFAULT_PARTITION}"))
        conn.execute(sa.text(f"CREATE TABLE {name} (LIKE events INCLUDING DEFAULTS)"))
        conn.execute(
            sa.text(
                f"INSERT INTO {name} SELECT * FROM {DEFAULT_PARTITION}"
                " WHERE recorded_at >= :start AND recorded_at < :end"
            ),
            bounds,
        )
        guard_token = conn.execute(sa.text("SELECT txid_current()::text")).scalar()
        conn.execute(
            sa.text("INSERT INTO retention_guard (token, cut) VALUES (:t, :end)"),
            {"t": guard_token, "end": end},
        )
        conn.execute(
            sa.text(
                f"DELETE FROM {DEFAULT_PARTITION}"
                " WHERE recorded_at >= :start AND recorded_at < :end"
            ),
            bounds,
        )
        conn.execute(sa.text("DELETE FROM retention_guard WHERE token = :t"), {"t": guard_token})
        conn.execute(
            sa.text(
                f"ALTER TABLE events ATTACH PARTITION {name}"
                f" FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
            )
        )
        conn.execute(sa.text(f"ALTER TABLE events ATTACH PARTITION {DEFAULT_PARTITION} DEFAULT"))
    else:
        conn.execute(
            sa.text(
                f"CREATE TABLE {name} PARTITION OF events"
                f" FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
            )
        )
    conn.execute(sa.text(TRUNCATE_TRIGGER.format(table=name)))


def _months_later(t: datetime, months: int) -> datetime:
    t = month_start(t)
    for _ in range(months):
        t = next_month(t)
    return t


def _is_partition(name: str | None) -> bool:
    return bool(name) and (
        name == DEFAULT_PARTITION or _PARTITION.fullmatch(name or "") is not None
    )


_PARTITION = re.compile(r"events_p\d{4}_\d{2}")
# On the partitioned table these two keys are indexes, not unique constraints (see above).
_KEY_INDEXES = {"ix_events_run_id_seq", "ix_events_run_id_event_id"}
_KEY_CONSTRAINTS = {"uq_events_run_id_seq", "uq_events_run_id_event_id"}


def include_object(obj: Any, name: str | None, kind: str, reflected: bool, compare_to: Any) -> bool:
    """For alembic's comparison: the monthly partitions are not in ``store.schema``."""
    if kind == "table" and _is_partition(name):
        return False
    table = getattr(obj, "table", None)
    return not (table is not None and _is_partition(getattr(table, "name", None)))


def expected_difference(diff: Any) -> bool:
    """A difference that partitioning makes on purpose (the keys above)."""
    if not isinstance(diff, tuple) or len(diff) < 2:
        return False
    kind, obj = diff[0], diff[1]
    return (kind == "remove_index" and obj.name in _KEY_INDEXES) or (
        kind == "add_constraint" and obj.name in _KEY_CONSTRAINTS
    )


def partitions_of(engine: Engine) -> list[Partition]:
    with engine.connect() as conn:
        return partitions(conn) if is_partitioned(conn) else []
