"""``tracelake subjects find`` and ``tracelake erase``: one person's data, found and unlinked.

*find* computes the subject's current pseudonym (from its secret, if one exists) and counts
the stored events, derived rows and quarantine entries that carry it; it also counts events
with the pseudonym an older tracelake derived from the key alone (``legacy_events``: linkable
by anyone with the key, not erasable by shredding -- remove them with retention) and events
that contain the raw value itself (``raw_value_events``: a scrubber miss; should be 0).

*erase* deletes the subject's secret (crypto-shredding: the log is never rewritten), physically
(SQLite ``secure_delete`` and a WAL checkpoint; PostgreSQL ``VACUUM FULL`` of the secrets
table), stores a receipt in ``erasures`` and appends a ``subject.erased`` event. Neither the
receipt nor the event holds the value, its pseudonym or its secret reference: only an erasure
id, the time and counts. Parquet exports that still carry the pseudonym are listed (unlinkable
now, but an operator may want them rewritten).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.run_identity import TRACELAKE_SOURCE
from tracelake.store import Store
from tracelake.store.dialects import contains as _contains
from tracelake.store.dialects import secure_delete
from tracelake.store.records import NewEvent
from tracelake.store.schema import JSONDocument, metadata
from tracelake.store.subject_secrets import pseudonym_with, secrets_for, subject_ref

LIFECYCLE_RUN = "tracelake:lifecycle"
SOURCE = TRACELAKE_SOURCE
MIN_RAW_CHARS = 4  # shorter values match too much text to mean anything
_NOT_SCANNED = {
    "events",
    "event_chain",
    "chain_anchors",
    "chain_removed",
    "verify_checkpoints",
    "subject_secrets",
    "erasures",
    "retention_guard",
}


@dataclass
class Findings:
    has_secret: bool
    events: int = 0
    legacy_events: int = 0
    raw_value_events: int = 0
    derived: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "legacy_events": self.legacy_events,
            "raw_value_events": self.raw_value_events,
            "derived": self.derived,
            "has_secret": self.has_secret,
        }


def _count_events(conn: Connection, needle: str) -> int:
    events = metadata.tables["events"]
    # the payload's type/plan_id/step_id/tool may be stored in their columns only (0010)
    cols = (
        events.c.payload,
        events.c.run_id,
        events.c.event_id,
        events.c.redactions,
        events.c.plan_id,
        events.c.step_id,
        events.c.tool,
    )
    where = sa.or_(*(_contains(conn, c, needle) for c in cols))
    return int(conn.execute(sa.select(sa.func.count()).where(where)).scalar() or 0)


def _count_derived(conn: Connection, needle: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for name, table in sorted(metadata.tables.items()):
        if name in _NOT_SCANNED:
            continue
        cols = [c for c in table.c if isinstance(c.type, sa.Text | JSONDocument)]
        if not cols:
            continue
        where = sa.or_(*(_contains(conn, c, needle) for c in cols))
        n = int(
            conn.execute(sa.select(sa.func.count()).select_from(table).where(where)).scalar() or 0
        )
        if n:
            found[name] = n
    return found


def find(store: Store, key: bytes, value: str) -> Findings:
    secret = secrets_for(key, store.url).lookup(value)
    legacy = pseudonym_with(bytes(key), value)
    with store.reading("find a subject") as conn:
        result = Findings(has_secret=secret is not None)
        if secret is not None:
            current = pseudonym_with(secret, value)
            result.events = _count_events(conn, current)
            result.derived = _count_derived(conn, current)
        result.legacy_events = _count_events(conn, legacy)
        if len(value) >= MIN_RAW_CHARS:
            result.raw_value_events = _count_events(conn, value)
    return result


def exports_with(directory: Path, needle: str) -> list[str]:
    """Parquet files under *directory* with *needle* in any text column."""
    import polars as pl

    hits: list[str] = []
    for path in sorted(directory.rglob("*.parquet")):
        frame = pl.read_parquet(path)
        text = [c for c, t in frame.schema.items() if t == pl.String]
        if (
            text
            and frame.select(
                pl.any_horizontal(pl.col(c).str.contains(needle, literal=True) for c in text).any()
            ).item()
        ):
            hits.append(str(path.relative_to(directory)))
    return hits


def erase(store: Store, key: bytes, value: str, exports: Path | None = None) -> dict[str, Any]:
    """Shred the subject's secret; store and return the receipt (no personal data in it)."""
    subjects = secrets_for(key, store.url)
    before = find(store, key, value)
    secret = subjects.lookup(value)
    to_rewrite: list[str] | None = None
    if exports is not None and secret is not None:
        to_rewrite = exports_with(exports, pseudonym_with(secret, value))
    erasure_id = uuid.uuid4().hex
    now = datetime.now(UTC)
    receipt: dict[str, Any] = {
        "erasure_id": erasure_id,
        "erased_at": now.isoformat(),
        "secret_deleted": secret is not None,
        "events_unlinked": before.events,
        "derived_rows_unlinked": before.derived,
        "legacy_events_still_linkable": before.legacy_events,
        "raw_value_events": before.raw_value_events,
        "exports_to_rewrite": to_rewrite,
        "method": "crypto-shredding: the subject's pseudonym secret was deleted",
    }
    with store.writing("erase a subject") as conn:
        secure_delete(conn)  # zero the freed bytes
        conn.execute(
            sa.text("DELETE FROM subject_secrets WHERE subject_ref = :r"),
            {"r": subject_ref(key, value)},
        )
        conn.execute(
            metadata.tables["erasures"].insert(),
            {"id": erasure_id, "erased_at": now, "receipt": receipt},
        )
    _purge(store)
    subjects.forget()
    store.append([_event(erasure_id, now, receipt)])
    return receipt


def _purge(store: Store) -> None:
    """Make the deleted secret unrecoverable from the database files (as far as they go)."""
    store.purge("subject_secrets", "purge the erased secret")


def _event(erasure_id: str, now: datetime, receipt: dict[str, Any]) -> NewEvent:
    payload = {
        "type": "subject.erased",
        "erasure_id": erasure_id,
        "erased_at": receipt["erased_at"],
        "secret_deleted": receipt["secret_deleted"],
        "events_unlinked": receipt["events_unlinked"],
        "legacy_events_still_linkable": receipt["legacy_events_still_linkable"],
    }
    return NewEvent(
        run_id=LIFECYCLE_RUN,
        seq=None,
        type="subject.erased",
        source=SOURCE,
        payload=payload,
        recorded_at=now,
        event_id=f"erasure:{erasure_id}",
    )
