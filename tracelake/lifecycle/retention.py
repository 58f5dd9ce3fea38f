"""``tracelake retention apply``: archive the events recorded before a cut, then remove them.

One transaction, by the owner, holding the append lock (appends wait; the sink spools):

1. the chain is verified from its anchor to the end (a broken chain refuses: removing events
   would destroy the evidence) and the chain value at the retention point is taken;
2. every event with ``recorded_at`` before the cut is written to Parquet under the archive
   directory (Hive layout ``recorded_month=YYYY-MM/``, payloads as the stored, already
   scrubbed JSON text), files fsync'd, with a manifest (counts, positions, SHA-256 per file);
3. they are removed: on PostgreSQL whole monthly partitions before the cut are detached and
   dropped, and the partition holding the cut (and the DEFAULT one) is trimmed by a DELETE that
   the append-only trigger lets through only for this transaction (``retention_guard``); on
   SQLite the same guarded DELETE. Archived and removed counts must agree, or nothing happens;
4. the chain is re-anchored: a ``chain_anchors`` row at the highest position below which
   nothing is left, with the chain value there, and the digests of removed events above it
   (recorded before the cut but appended after an event that stays) in ``chain_removed``, so
   ``db verify`` still checks every remaining event and link.

Afterwards a ``retention.applied`` event (counts, cut, archive file names; no personal data)
is appended. Projections keep their derived rows; ``project --rebuild`` afterwards derives
only from what is left (documented in the README).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from array import array
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.errors import StoreError
from tracelake.lifecycle import verify
from tracelake.lifecycle.erasure import LIFECYCLE_RUN, SOURCE
from tracelake.store import Store, partitions
from tracelake.store.appender import COLUMNS as APPENDED_COLUMNS
from tracelake.store.dialects import json_as_text, time_param
from tracelake.store.records import NewEvent

CHUNK = 20_000
COLUMNS = ("position", *APPENDED_COLUMNS)  # every stored column, in table order


@dataclass
class RetentionReport:
    retention_id: str
    cut: str
    archived: int = 0
    removed: int = 0
    dropped_partitions: list[str] = field(default_factory=list)
    trimmed: int = 0
    files: list[str] = field(default_factory=list)
    anchor_position: int | None = None
    removed_above_anchor: int = 0
    dry_run: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan(store: Store, cut: datetime) -> RetentionReport:
    """What ``apply`` would do (counts only)."""
    report = RetentionReport("dry-run", cut.isoformat(), dry_run=True)
    with store.reading("plan retention") as conn:
        report.archived = report.removed = _count_before(conn, cut)
        if partitions.is_partitioned(conn):
            report.dropped_partitions = [p.name for p in _whole(conn, cut)]
    return report


def apply(store: Store, cut: datetime, archive: Path) -> RetentionReport:
    cut = cut.astimezone(UTC)
    report = RetentionReport(uuid.uuid4().hex[:16], cut.isoformat())
    target = archive / f"retention-{report.retention_id}"
    with store.writing("apply retention") as conn:
        store.lock_appends(conn)
        removing = _positions_before(conn, cut)
        if not removing:
            pass
        else:
            _retain(conn, store, cut, removing, target, report)
    if report.files:
        _write_manifest(target, report)
    store.append([_event(report)])
    return report


def _retain(
    conn: Connection,
    store: Store,
    cut: datetime,
    removing: array[int],
    target: Path,
    report: RetentionReport,
) -> None:
    survivor = conn.execute(
        sa.text("SELECT min(position) FROM events WHERE recorded_at >= :cut"),
        {"cut": _p(conn, cut)},
    ).scalar()
    below = removing[-1] if survivor is None else int(survivor) - 1  # nothing left up to here
    # Anchor at a link's end (so every remaining link is whole and its positions are
    # consecutive); removed events between that end and the rest keep their digests.
    anchor_at = max(
        verify._anchor(conn)[0],
        int(
            conn.execute(
                sa.text(
                    "SELECT coalesce(max(last_position), 0) FROM event_chain"
                    " WHERE last_position <= :p"
                ),
                {"p": below},
            ).scalar()
            or 0
        ),
    )
    removed = set(removing)
    digests: dict[int, bytes] = {}
    head_at: list[bytes] = []

    def on_event(position: int, digest: bytes, head: bytes) -> None:
        if position <= anchor_at:
            head_at[:] = [head]
        elif position in removed:
            digests[position] = digest

    walked = verify.walk(conn, full=True, on_event=on_event)
    if not walked.ok:
        raise StoreError(
            f"the hash chain is broken at position {walked.position} ({walked.problem}); "
            "retention would remove the evidence. Run `tracelake db verify` and investigate"
        )
    report.archived, report.files = _archive(conn, cut, target, report.retention_id)
    report.removed = _remove(conn, cut, report)
    if report.removed != report.archived or report.removed != len(removing):
        raise StoreError(
            f"retention archived {report.archived} events but would remove {report.removed}; "
            "nothing was removed (the archive files stay for inspection)"
        )
    old_anchor = verify._anchor(conn)[0]
    if head_at and anchor_at > old_anchor:
        conn.execute(
            sa.text(
                "INSERT INTO chain_anchors (position, head, reason, detail, created_at)"
                " VALUES (:p, :h, 'retention', :d, :t)"
            ),
            {
                "p": anchor_at,
                "h": head_at[0].hex(),
                "d": json.dumps({"retention_id": report.retention_id, "cut": report.cut}),
                "t": _p(conn, datetime.now(UTC)),
            },
        )
        conn.execute(sa.text("DELETE FROM event_chain WHERE last_position <= :p"), {"p": anchor_at})
        conn.execute(sa.text("DELETE FROM chain_removed WHERE position <= :p"), {"p": anchor_at})
        report.anchor_position = anchor_at
    if digests:
        conn.execute(
            sa.text("INSERT INTO chain_removed (position, digest) VALUES (:p, :d)"),
            [{"p": p, "d": d.hex()} for p, d in sorted(digests.items())],
        )
    report.removed_above_anchor = len(digests)


_p = time_param  # a timestamp parameter as the backend stores it


def _count_before(conn: Connection, cut: datetime) -> int:
    return int(
        conn.execute(
            sa.text("SELECT count(*) FROM events WHERE recorded_at < :cut"), {"cut": _p(conn, cut)}
        ).scalar()
        or 0
    )


def _positions_before(conn: Connection, cut: datetime) -> array[int]:
    rows = conn.execute(
        sa.text("SELECT position FROM events WHERE recorded_at < :cut ORDER BY position"),
        {"cut": _p(conn, cut)},
    )
    return array("q", (int(r[0]) for r in rows))


def _whole(conn: Connection, cut: datetime) -> list[partitions.Partition]:
    return [p for p in partitions.partitions(conn) if p.end is not None and p.end <= cut]


def _remove(conn: Connection, cut: datetime, report: RetentionReport) -> int:
    removed = 0
    if partitions.is_partitioned(conn):
        for part in _whole(conn, cut):
            n = conn.execute(sa.text(f"SELECT count(*) FROM {part.name}")).scalar()
            conn.execute(sa.text(f"ALTER TABLE events DETACH PARTITION {part.name}"))
            conn.execute(sa.text(f"DROP TABLE {part.name}"))
            report.dropped_partitions.append(part.name)
            removed += int(n or 0)
        token = str(conn.execute(sa.text("SELECT txid_current()")).scalar())
    else:
        token = "retention"
    guard = {"t": token, "cut": _p(conn, cut)}
    conn.execute(sa.text("INSERT INTO retention_guard (token, cut) VALUES (:t, :cut)"), guard)
    trimmed = conn.execute(
        sa.text("DELETE FROM events WHERE recorded_at < :cut"), {"cut": _p(conn, cut)}
    ).rowcount
    conn.execute(sa.text("DELETE FROM retention_guard WHERE token = :t"), {"t": token})
    report.trimmed = int(trimmed or 0)
    return removed + report.trimmed


def _archive(
    conn: Connection, cut: datetime, target: Path, retention_id: str
) -> tuple[int, list[str]]:
    import polars as pl

    select = ", ".join(
        json_as_text(conn, c) if c in ("payload", "redactions") else c for c in COLUMNS
    )
    query = sa.text(
        f"SELECT {select} FROM events WHERE recorded_at < :cut ORDER BY position"
    ).execution_options(yield_per=CHUNK)
    rows = conn.execute(query, {"cut": _p(conn, cut)})
    count, files, n = 0, [], 0
    schema: dict[str, Any] = {
        "position": pl.Int64,
        "run_id": pl.String,
        "seq": pl.Int64,
        "type": pl.String,
        "source": pl.String,
        "event_id": pl.String,
        "plan_id": pl.String,
        "step_id": pl.String,
        "tool": pl.String,
        "collection_id": pl.String,
        "recorded_at": pl.Datetime("us", "UTC"),
        "content_hash": pl.String,
        "payload": pl.String,
        "redactions": pl.String,
    }
    for chunk in rows.partitions(CHUNK):
        records = [dict(zip(COLUMNS, r, strict=True)) for r in chunk]
        for r in records:
            if isinstance(r["recorded_at"], str):
                r["recorded_at"] = datetime.fromisoformat(r["recorded_at"]).replace(tzinfo=UTC)
        frame = pl.DataFrame(records, schema=schema, orient="row")
        months = frame.with_columns(month=pl.col("recorded_at").dt.strftime("%Y-%m"))
        for (month,), part in months.partition_by("month", as_dict=True).items():
            folder = target / f"recorded_month={month}"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"part-{retention_id}-{n:05d}.parquet"
            part.drop("month").write_parquet(path)
            _fsync(path)
            files.append(str(path.relative_to(target.parent)))
            n += 1
        count += frame.height
    return count, files


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_manifest(target: Path, report: RetentionReport) -> None:
    root = target.parent
    manifest = {
        **report.as_dict(),
        "sha256": {f: hashlib.sha256((root / f).read_bytes()).hexdigest() for f in report.files},
    }
    path = target / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    _fsync(path)


def _event(report: RetentionReport) -> NewEvent:
    now = datetime.now(UTC)
    payload = {
        "type": "retention.applied",
        "retention_id": report.retention_id,
        "cut": report.cut,
        "archived": report.archived,
        "removed": report.removed,
        "dropped_partitions": report.dropped_partitions,
        "trimmed": report.trimmed,
        "anchor_position": report.anchor_position,
        "files": report.files,
    }
    return NewEvent(
        run_id=LIFECYCLE_RUN,
        seq=None,
        type="retention.applied",
        source=SOURCE,
        payload=payload,
        recorded_at=now,
        event_id=f"retention:{report.retention_id}",
    )
