"""Batched, idempotent, gap-safe appends to the ``events`` table.

Invariant 2 — a reader polling "events after position N" never skips an event that commits
later with a lower position. Positions come from a sequence (PostgreSQL identity / SQLite
rowid) and are taken at insert, but become visible at commit; two writers could commit out of
order and a poller that saw the higher position first would never look back. We prevent that
by *serialising appends*: every append transaction first takes one exclusive lock and holds it
until commit, and positions are assigned only after the lock is held. So transactions commit
in position order, and once position P is visible every lower position is either visible or
belongs to a rolled-back transaction and will never appear. Readers need no watermark.

* PostgreSQL: ``pg_advisory_xact_lock(APPEND_LOCK_KEY)``, released by COMMIT/ROLLBACK after
  the commit is visible (the same trick as eventsourcing's ``LOCK TABLE``, but it does not
  block readers or projections writing other tables).
* SQLite: ``BEGIN IMMEDIATE`` (see ``store.connection``) takes the database's single write lock.

Serialising costs little because each transaction appends a whole batch.

Invariant 3 — idempotence. Under the same lock we look up which ``(run_id, seq)`` keys and
client ``event_id`` values of the batch exist already; those with the same content hash are
duplicates and skipped, those with different content are *conflicts*, quarantined with the
reason ``sequence_conflict`` (never silently dropped, never overwriting). Because the lookup
and the write happen under the append lock, no concurrent writer can slip in between.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from tracelake import codec
from tracelake.errors import DataRejectedError
from tracelake.store import chain
from tracelake.store.connection import translate_errors, write_transaction
from tracelake.store.copy_format import copy_text
from tracelake.store.quarantine import QuarantineWriter, conflict_item, rejected_item
from tracelake.store.reader import STORED_RUNS
from tracelake.store.records import AppendResult, EncodedEvent, NewEvent
from tracelake.store.redactions import Contexts, Reports, compact
from tracelake.store.schema import events

APPEND_LOCK_KEY = 0x7472616365  # "trace"
COPY_BLOCK = 250  # rows per COPY write

COLUMNS = (
    "run_id",
    "seq",
    "type",
    "source",
    "event_id",
    "plan_id",
    "step_id",
    "tool",
    "collection_id",
    "recorded_at",
    "content_hash",
    "payload",
    "redactions",
)


def row_of(e: EncodedEvent) -> tuple[object, ...]:
    return (
        e.run_id,
        e.seq,
        e.type,
        e.source,
        e.event_id,
        e.plan_id,
        e.step_id,
        e.tool,
        e.collection_id,
        e.recorded_at,
        e.content_hash,
        e.payload_json,
        e.redactions_json,
    )


class Appender(ABC):
    """Appends batches; one transaction per batch, never one per event.

    A batch is :class:`NewEvent` objects (encoded here with the fast codec) or
    :class:`EncodedEvent` objects already encoded by the ingest workers (the fast path: the
    payload is never decoded in this process). On PostgreSQL the rows are written as COPY text
    in blocks, so the server parses one block while the next is being built.
    """

    def __init__(self, engine: Engine, quarantine: QuarantineWriter) -> None:
        self.engine = engine
        self.quarantine = quarantine
        self.reports = Reports(engine)
        self.contexts = Contexts(engine)

    def append(self, batch: Sequence[NewEvent | EncodedEvent]) -> AppendResult:
        """Append a batch in one transaction.

        If the database refuses a *value* (not an outage), the batch is split until the events
        it refuses are found; those are quarantined as ``rejected_by_database`` with a preview
        of their (scrubbed) payload, and every other event is appended. Outages raise.
        """
        if not batch:
            return AppendResult()
        return self._append_encoded(compact(self.contexts, self.encode(batch)))

    def encode(self, batch: Sequence[NewEvent | EncodedEvent]) -> list[EncodedEvent]:
        """Encode NewEvents with the fast codec; their redaction reports are interned (new
        ones first, see ``store.redactions``) and referenced."""
        refs = self.reports.refs(
            [
                codec.dumps_bytes(e.redactions)
                if isinstance(e, NewEvent) and e.redactions
                else None
                for e in batch
            ]
        )
        return [
            e if isinstance(e, EncodedEvent) else EncodedEvent.of(e, ref, omit_columns=True)
            for e, ref in zip(batch, refs, strict=True)
        ]

    def _append_encoded(self, batch: list[EncodedEvent]) -> AppendResult:
        try:
            return self._append_once(batch)
        except DataRejectedError as exc:
            if len(batch) == 1:
                self.quarantine.add([rejected_item(batch[0], exc)])
                return AppendResult(rejected=1)
            half = len(batch) // 2
            result = self._append_encoded(batch[:half])
            result += self._append_encoded(batch[half:])
            return result

    def _append_once(self, batch: list[EncodedEvent]) -> AppendResult:
        with translate_errors("append to events"), write_transaction(self.engine) as conn:
            self.lock(conn)
            return self._append_locked(conn, batch)

    def _append_locked(self, conn: Connection, batch: list[EncodedEvent]) -> AppendResult:
        result = AppendResult()
        fresh = self._sort_out(conn, batch, result)
        if fresh:
            self.write(conn, self._number(conn, fresh))
            chain.link_appended(conn)  # tamper evidence, same transaction (store.chain)
            result.appended = len(fresh)
        if result.conflicts:
            self.quarantine.write(conn, [conflict_item(e) for e in result.conflicts])
        return result

    def _sort_out(
        self, conn: Connection, batch: list[EncodedEvent], result: AppendResult
    ) -> list[EncodedEvent]:
        """The batch's new events; duplicates are counted and conflicts listed in *result*."""
        keyed = [e.key for e in batch if e.seq is not None]
        by_key: dict[tuple[str, int], str | EncodedEvent] = dict(
            self.existing_keys(conn, keyed) if keyed else {}
        )
        ids = [(e.run_id, e.event_id) for e in batch if e.event_id is not None]
        by_id: dict[tuple[str, str], str | EncodedEvent] = dict(
            self.existing_event_ids(conn, ids) if ids else {}
        )
        fresh: list[EncodedEvent] = []
        for e in batch:
            seen = _seen(e, by_key, by_id)
            if seen is None:
                fresh.append(e)
                _remember(e, by_key, by_id)  # a repeat inside the same batch compares to it
            elif _hash(seen) == e.content_hash:
                result.duplicates += 1
            else:
                result.conflicts.append(e)
        return fresh

    def _number(self, conn: Connection, fresh: list[EncodedEvent]) -> list[EncodedEvent]:
        """Give events without a seq the next numbers of their run, in batch order.

        Live producers (the sink) leave ``seq`` to the store so that a run continues correctly
        across producer restarts; their retries are deduplicated by ``event_id`` instead. Under
        the append lock, "the run's highest seq" cannot change until we commit.
        """
        runs = sorted({e.run_id for e in fresh if e.seq is None})
        if not runs:
            return fresh
        top = self.max_seqs(conn, runs)
        for e in fresh:  # explicit seqs in the same batch count too
            if e.seq is not None and e.run_id in top:
                top[e.run_id] = max(top[e.run_id], e.seq)
        numbered = []
        for e in fresh:
            if e.seq is None:
                top[e.run_id] = top.get(e.run_id, 0) + 1
                e = replace(e, seq=top[e.run_id])
            numbered.append(e)
        return numbered

    def max_seqs(self, conn: Connection, runs: list[str]) -> dict[str, int]:
        rows = conn.execute(
            sa.select(events.c.run_id, sa.func.max(events.c.seq))
            .where(events.c.run_id.in_(runs))
            .group_by(events.c.run_id)
        )
        found = {r[0]: int(r[1]) for r in rows}
        return {run: found.get(run, 0) for run in runs}

    @abstractmethod
    def lock(self, conn: Connection) -> None:
        """Take the append lock for the rest of the transaction."""

    @abstractmethod
    def existing_keys(
        self, conn: Connection, keys: list[tuple[str, int]]
    ) -> dict[tuple[str, int], str]:
        """Content hashes of the given ``(run_id, seq)`` keys that are already stored."""

    def existing_event_ids(
        self, conn: Connection, ids: list[tuple[str, str]]
    ) -> dict[tuple[str, str], str]:
        """Content hashes of the given ``(run_id, event_id)`` pairs that are already stored."""
        found: dict[tuple[str, str], str] = {}
        for start in range(0, len(ids), 400):
            rows = conn.execute(
                sa.select(events.c.run_id, events.c.event_id, events.c.content_hash).where(
                    sa.tuple_(events.c.run_id, events.c.event_id).in_(ids[start : start + 400])
                )
            )
            found.update({(r.run_id, r.event_id): r.content_hash for r in rows})
        return found

    @abstractmethod
    def write(self, conn: Connection, fresh: Sequence[EncodedEvent | NewEvent]) -> None:
        """Write new rows; positions are assigned here, after the lock."""


class SqliteAppender(Appender):
    _INSERT = f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"

    def lock(self, conn: Connection) -> None:
        """Nothing to do: the transaction began with BEGIN IMMEDIATE (the write lock)."""

    def existing_keys(
        self, conn: Connection, keys: list[tuple[str, int]]
    ) -> dict[tuple[str, int], str]:
        found: dict[tuple[str, int], str] = {}
        for start in range(0, len(keys), 400):  # stay far below SQLite's variable limit
            chunk = keys[start : start + 400]
            rows = conn.execute(
                sa.select(events.c.run_id, events.c.seq, events.c.content_hash).where(
                    sa.tuple_(events.c.run_id, events.c.seq).in_(chunk)
                )
            )
            found.update({(r.run_id, r.seq): r.content_hash for r in rows})
        return found

    def write(self, conn: Connection, fresh: Sequence[EncodedEvent | NewEvent]) -> None:
        rows = [row_of(e) for e in _encoded(fresh)]
        rows = [(*r[:9], _sqlite_time(r[9]), *r[10:]) for r in rows]
        conn.exec_driver_sql(self._INSERT, rows)


class PostgresAppender(Appender):
    _COPY = f"COPY events ({', '.join(COLUMNS)}) FROM STDIN"

    def lock(self, conn: Connection) -> None:
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": APPEND_LOCK_KEY})

    def existing_keys(
        self, conn: Connection, keys: list[tuple[str, int]]
    ) -> dict[tuple[str, int], str]:
        # Most keys of an ingest belong to runs with nothing stored yet: one search per run
        # (about ten times fewer than per key, each visiting every partition) finds the runs
        # to look keys up in, usually none.
        stored = self.stored_runs(conn, sorted({k[0] for k in keys}))
        keys = [k for k in keys if k[0] in stored]
        if not keys:
            return {}
        rows = conn.execute(
            EXISTING_KEYS, {"runs": [k[0] for k in keys], "seqs": [k[1] for k in keys]}
        )
        return {(r.run_id, r.seq): r.content_hash for r in rows}

    def stored_runs(self, conn: Connection, runs: list[str]) -> set[str]:
        """Which of *runs* have at least one stored event."""
        rows = conn.execute(STORED_RUNS, {"runs": runs})
        return {str(r[0]) for r in rows}

    def existing_event_ids(
        self, conn: Connection, ids: list[tuple[str, str]]
    ) -> dict[tuple[str, str], str]:
        # One statement of two arrays (not row-value IN lists of 400 pairs, which PostgreSQL
        # planned slowly and psycopg re-parsed per batch): a spool replay's main cost.
        rows = conn.execute(
            sa.text(  # index probes whatever the statistics say (see reader.STORED_RUNS)
                "SELECT k.run_id, k.event_id, e.content_hash"
                " FROM unnest(CAST(:runs AS text[]), CAST(:ids AS text[])) AS k(run_id, event_id),"
                " LATERAL (SELECT content_hash FROM events"
                " WHERE run_id = k.run_id AND event_id = k.event_id LIMIT 1) AS e"
            ),
            {"runs": [k[0] for k in ids], "ids": [k[1] for k in ids]},
        )
        return {(r.run_id, r.event_id): r.content_hash for r in rows}

    def write(self, conn: Connection, fresh: Sequence[EncodedEvent | NewEvent]) -> None:
        fresh = _encoded(fresh)
        raw = conn.connection.driver_connection
        assert raw is not None
        try:
            with raw.cursor() as cur, cur.copy(self._COPY) as copy:
                # COPY text built here in blocks: the server parses one while the next is built.
                for start in range(0, len(fresh), COPY_BLOCK):
                    copy.write(copy_text(fresh[start : start + COPY_BLOCK]))
        except psycopg.Error as exc:  # the raw cursor bypasses SQLAlchemy's wrapping: wrap it
            # here, so translate_errors maps it like any other statement's error (a value the
            # server refuses, e.g. NUL in text, becomes DataRejectedError and is quarantined).
            raise sa.exc.DBAPIError.instance("COPY events", None, exc, psycopg.Error) from exc
        conn.exec_driver_sql(
            "NOTIFY tracelake_events"
        )  # at commit: wakes store/leadership.py's leader


# The stored content hash of each (run_id, seq): index probes whatever the statistics say
# (see reader.STORED_RUNS; tests/store/test_plans_without_statistics.py)
EXISTING_KEYS = sa.text(
    "SELECT k.run_id, k.seq, e.content_hash"
    " FROM unnest(CAST(:runs AS text[]), CAST(:seqs AS int[])) AS k(run_id, seq),"
    " LATERAL (SELECT content_hash FROM events"
    " WHERE run_id = k.run_id AND seq = k.seq LIMIT 1) AS e"
)


def _encoded(rows: Sequence[EncodedEvent | NewEvent]) -> list[EncodedEvent]:
    return [EncodedEvent.of(e) for e in rows]


def _sqlite_time(value: object) -> str:
    assert isinstance(value, datetime)
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def content_hash(e: NewEvent | EncodedEvent) -> str:
    return EncodedEvent.of(e).content_hash


def _seen(
    e: EncodedEvent,
    by_key: dict[tuple[str, int], str | EncodedEvent],
    by_id: dict[tuple[str, str], str | EncodedEvent],
) -> str | EncodedEvent | None:
    """What is already stored (or earlier in the batch) under this event's seq or event_id."""
    seen = by_key.get(e.key) if e.seq is not None else None
    if seen is None and e.event_id is not None:
        seen = by_id.get((e.run_id, e.event_id))
    return seen


def _remember(
    e: EncodedEvent,
    by_key: dict[tuple[str, int], str | EncodedEvent],
    by_id: dict[tuple[str, str], str | EncodedEvent],
) -> None:
    if e.seq is not None:
        by_key[e.key] = e
    if e.event_id is not None:
        by_id[(e.run_id, e.event_id)] = e


def _hash(seen: str | EncodedEvent) -> str:
    return seen if isinstance(seen, str) else seen.content_hash
