"""The hash chain over the log: tamper evidence that works on both backends.

Every event has a *digest*: SHA-256 over its stored columns exactly as the database holds them
(on PostgreSQL computed by the server from ``payload::text``, the canonical JSONB text; on
SQLite from the stored JSON text). The chain value after an event is
``h(p) = SHA-256(h(p - 1) || digest(p))``, starting from an anchor (``chain_anchors``: the
genesis at position 0, then one per retention). Each append transaction adds one row to
``event_chain``: its last position, the chain value there (``head``) and the first 8 bytes of
each event's digest, so a verifier can name the first event that changed, not just the batch.

Written in the append transaction, under the append lock (``store.appender``): the link covers
exactly the rows after the previous link, read back by position (the server computes the
digests, so nothing is re-encoded on the client, and sends a page of them as one value).
Cost: one indexed read of the batch just written and one SHA-256 per event (measured in
BENCHMARKS.md).

What it proves: any UPDATE, DELETE or INSERT-in-the-middle of ``events`` done around the
triggers (a superuser, ``PRAGMA writable_schema``, a dropped trigger) breaks the chain at the
first affected position; ``tracelake db verify`` reports it. What it cannot prove on its own:
someone able to rewrite *both* the events and ``event_chain`` can recompute every link. Keep
the head that ``db verify`` prints somewhere else (a ticket, a log) and pass it back with
``--expect-head`` to close that gap.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Generator
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.errors import StoreError

GENESIS = "0" * 64
# The digest's text of recorded_at is fixed (UTC, explicit format), independent of the session's
# TimeZone and DateStyle and of the server version's float/numeric extract().
PREFIX = 8  # bytes of each event's digest kept in its link

_PG_DIGEST = (
    "sha256(convert_to(json_build_array(position, run_id, seq, type, source, event_id, plan_id,"
    " step_id, tool, collection_id,"
    " to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'),"
    " content_hash, redactions IS NULL)::text || E'\\n' || payload::text || E'\\n'"
    " || coalesce(redactions::text, ''), 'UTF8'))"
)
_PG_ROWS = f"SELECT position, {_PG_DIGEST} FROM events WHERE position > :after ORDER BY position"
_SQLITE_ROWS = (
    "SELECT position, run_id, seq, type, source, event_id, plan_id, step_id, tool,"
    " collection_id, recorded_at, content_hash, payload, redactions FROM events"
    " WHERE position > :after ORDER BY position"
)


def sqlite_digest(row: tuple[object, ...] | sa.Row[tuple[object, ...]]) -> bytes:
    """The digest of one SQLite row (the columns of ``_SQLITE_ROWS``, in order)."""
    payload, redactions = row[12], row[13]
    header = json.dumps(
        [*row[:12], redactions is None], ensure_ascii=False, separators=(",", ":"), default=str
    )
    h = hashlib.sha256(header.encode("utf-8"))
    h.update(b"\n" + str(payload).encode("utf-8", "surrogatepass") + b"\n")
    if redactions is not None:
        h.update(str(redactions).encode("utf-8", "surrogatepass"))
    return h.digest()


def digests_after(
    conn: Connection, after: int, *, stream: bool = False, limit: int | None = None
) -> Generator[tuple[int, bytes], None, None]:
    """``(position, digest)`` of every stored event after *after* (the first *limit* of
    them), in position order."""
    pg = conn.dialect.name == "postgresql"
    sql = _PG_ROWS if pg else _SQLITE_ROWS
    params: dict[str, int] = {"after": after}
    if limit is not None:
        # With a LIMIT the plan is an ordered index scan whatever the statistics say: a bulk
        # load outruns autovacuum's ANALYZE, and with no statistics PostgreSQL read the
        # whole partition and sorted it for every link (0.16 s per batch at 430k events)
        sql += " LIMIT :limit"
        params["limit"] = limit
    query = sa.text(sql)
    if stream:
        query = query.execution_options(yield_per=5000)
    rows = conn.execute(query, params)
    try:
        if pg:
            for position, digest in rows:
                # NULL: a payload made NULL around the schema; no digest matches it
                yield int(position), b"" if digest is None else bytes(digest)
        else:
            for row in rows:
                yield int(row[0]), sqlite_digest(row)
    finally:
        rows.close()  # a reader that stops early must not leave a server-side cursor behind


def advance(head: bytes, digest: bytes) -> bytes:
    return hashlib.sha256(head + digest).digest()


def tip(conn: Connection) -> tuple[int, str]:
    """The last chained position and the chain value there (a link's or an anchor's)."""
    row = conn.execute(
        sa.text(
            "SELECT position, head FROM ("
            " SELECT last_position AS position, head FROM event_chain"
            " ORDER BY last_position DESC LIMIT 1) l"
            " UNION ALL SELECT * FROM ("
            " SELECT position, head FROM chain_anchors ORDER BY position DESC LIMIT 1) a"
            " ORDER BY position DESC LIMIT 1"
        )
    ).first()
    if row is None:
        return 0, GENESIS
    return int(row[0]), str(row[1])


_LINK_PAGE = 5_000  # digests read per statement while linking (each an ordered index scan)
# A page of digests as one row, concatenated in position order by the server: the client
# reads one bytea instead of 5,000 rows (linking 100k stored events: 0.17 instead of 0.51 s of
# the client's CPU, BENCHMARKS.md session 23).
_PG_PAGE = (
    "SELECT count(*), min(position), max(position), string_agg(d, ''::bytea ORDER BY position)"
    f" FROM (SELECT position, {_PG_DIGEST} AS d FROM events WHERE position > :after"
    " ORDER BY position LIMIT :limit) page"
)
DIGEST = 32  # bytes of SHA-256


def _digest_page(conn: Connection, after: int, limit: int) -> tuple[int, int, bytes]:
    """``(first, last, digests)`` of the first *limit* events after *after*: their positions
    and their digests concatenated in position order (``(0, 0, b"")`` when there is none)."""
    if conn.dialect.name == "postgresql":
        count, first, last, blob = conn.execute(
            sa.text(_PG_PAGE), {"after": after, "limit": limit}
        ).one()
        if not count:
            return 0, 0, b""
        if blob is None or len(blob) != count * DIGEST:  # string_agg skips a NULL digest
            raise StoreError(
                f"an event at positions {first}..{last} has no digest (its payload is NULL):"
                " the events table was changed around tracelake; nothing more is linked until"
                " it is repaired. Run `tracelake db verify` to find it."
            )
        return int(first), int(last), bytes(blob)
    first = last = 0
    digests = bytearray()
    for position, digest in digests_after(conn, after, limit=limit):
        first, last = first or position, position
        digests += digest
    return first, last, bytes(digests)


def link_appended(conn: Connection, limit: int | None = None) -> int:
    """Chain the events appended since the last link; call under the append lock, in the
    append transaction. Returns how many events the new link covers (at most *limit*)."""
    after, head_hex = tip(conn)
    head = bytes.fromhex(head_hex)
    first = last = 0
    prefixes = bytearray()
    while limit is None or len(prefixes) < limit * PREFIX:
        page = _LINK_PAGE if limit is None else min(_LINK_PAGE, limit - len(prefixes) // PREFIX)
        page_first, last_read, digests = _digest_page(conn, last or after, page)
        if not digests:
            break
        first, last = first or page_first, last_read
        for i in range(0, len(digests), DIGEST):
            digest = digests[i : i + DIGEST]
            prefixes += digest[:PREFIX]
            head = advance(head, digest)
        if len(digests) < page * DIGEST:
            break
    if not first:
        return 0
    conn.execute(
        sa.text(
            "INSERT INTO event_chain (last_position, first_position, head, digests, created_at)"
            " VALUES (:last, :first, :head, :digests, :now)"
        ),
        {
            "last": last,
            "first": first,
            "head": head.hex(),
            "digests": bytes(prefixes),
            "now": _now(conn),
        },
    )
    return len(prefixes) // PREFIX


def _now(conn: Connection) -> object:
    now = datetime.now(UTC)
    if conn.dialect.name == "sqlite":
        return now.strftime("%Y-%m-%d %H:%M:%S.%f")
    return now
