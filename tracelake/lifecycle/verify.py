"""``tracelake db verify``: recompute the hash chain over the stored log (see ``store.chain``).

From the newest anchor (the genesis, or the last retention) or, incrementally, from the stored
checkpoint (always a link's end, so the chain value there is known), it streams the events in
position order with their digests, walks the links, and stops at the first position where
something does not hold:

* an event whose digest differs from the one its link recorded: changed;
* a link expecting more events than are stored before the next one: an event removed;
* a stored event that no link covers, or a position twice: inserted around the appender;
* a link whose head is not the chain value: the chain record itself was edited.

It also checks what protects the log: the append-only triggers exist and are enabled, the
trigger function is the one tracelake installed, and no retention guard row lingers.
A clean run moves the checkpoint (unless ``save=False``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.store import Store, chain, protection
from tracelake.store.dialects import time_param

CHECKPOINT = "db verify"


@dataclass
class VerifyResult:
    ok: bool
    start: int  # the position verification started after
    end: int  # the last position verified
    events: int  # events checked
    links: int
    head: str  # the chain value at ``end``
    incremental: bool
    position: int | None = None  # the first bad position
    problem: str | None = None
    schema_problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Broken(Exception):
    def __init__(self, position: int, problem: str) -> None:
        super().__init__(problem)
        self.position = position
        self.problem = problem


def verify(
    store: Store,
    *,
    full: bool = False,
    save: bool = True,
    until: int | None = None,
    expect: tuple[int, str] | None = None,
) -> VerifyResult:
    """Verify the chain; incremental from the checkpoint unless *full*. *expect* is a
    ``(position, head)`` kept outside the database: the chain must still pass through it."""
    seen: list[str] = []
    full = full or expect is not None

    def at(position: int, _digest: bytes, head: bytes) -> None:
        if expect is not None and position <= expect[0]:
            seen[:] = [head.hex()]

    # One snapshot (appends that commit meanwhile are not seen, so rows and links agree).
    with store.snapshot("verify the log") as conn:
        result = walk(conn, full=full, until=until, on_event=at if expect else None)
        if expect is not None and result.ok and (not seen or seen[0] != expect[1]):
            result.ok, result.position = False, expect[0]
            result.problem = "the chain no longer passes through the expected head"
        result.schema_problems = schema_problems(conn)
        result.ok = result.ok and not result.schema_problems
    if result.ok and save and result.links:
        _save_checkpoint(store, result.end, result.head)
    return result


def walk(
    conn: Connection,
    *,
    full: bool = True,
    until: int | None = None,
    on_event: Any = None,
) -> VerifyResult:
    """The chain walk itself, on an open connection. *on_event(position, digest, head)* is
    called for each verified event (retention uses it to find the chain value at its anchor)."""
    start, head_hex = _start(conn, full)
    incremental = not full and start > _anchor(conn)[0]
    result = VerifyResult(True, start, start, 0, 0, head_hex, incremental)
    items = _merged(conn, start)
    state = _Walk(items, bytes.fromhex(head_hex), result, on_event)
    try:
        for last, first, link_head, prefixes in _links(conn, start):
            if until is not None and first > until:
                break
            state.link(start, last, first, link_head, prefixes)
        pending = state.pending
        if pending is not None and (until is None or pending[0] <= until):
            raise _Broken(pending[0], "event not covered by the chain (inserted around it)")
    except _Broken as broken:
        result.ok, result.position, result.problem = False, broken.position, broken.problem
    finally:
        items.close()
    return result


class _Walk:
    """One walk's state: the next stored (or removed) event and the running chain value."""

    def __init__(
        self,
        items: Iterator[tuple[int, bytes]],
        head: bytes,
        result: VerifyResult,
        on_event: Any,
    ) -> None:
        self.items, self.head, self.result, self.on_event = items, head, result, on_event
        self.pending = next(items, None)

    def link(self, start: int, last: int, first: int, link_head: str, prefixes: bytes) -> None:
        """Check one chain record: its events in order, then its head."""
        pending = self.pending
        if pending is not None and start < pending[0] < first:
            raise _Broken(pending[0], "event not covered by the chain (inserted around it)")
        if first <= start:  # anchors and checkpoints sit at link ends
            raise _Broken(first, "chain record overlaps the anchor (chain records edited)")
        expected = len(prefixes) // chain.PREFIX
        for index in range(expected):
            self._event(last, index, expected, prefixes)
        if self.head.hex() != link_head:
            raise _Broken(last, "chain record changed (its head does not match)")
        self.result.links += 1
        self.result.end, self.result.head = last, link_head

    def _event(self, last: int, index: int, expected: int, prefixes: bytes) -> None:
        pending = self.pending
        if pending is None or pending[0] > last:
            raise _Broken(
                pending[0] if pending else last,
                f"{expected - index} event(s) of the link ending at {last} are missing (removed)",
            )
        position, digest = pending
        want = prefixes[index * chain.PREFIX : (index + 1) * chain.PREFIX]
        if digest[: chain.PREFIX] != want:
            nxt = prefixes[(index + 1) * chain.PREFIX : (index + 2) * chain.PREFIX]
            if nxt and digest[: chain.PREFIX] == nxt:
                raise _Broken(position, "the event before this position was removed")
            raise _Broken(position, "event changed since it was appended")
        self.head = chain.advance(self.head, digest)
        if self.on_event is not None:
            self.on_event(position, digest, self.head)
        self.result.events += 1
        self.pending = next(self.items, None)
        if self.pending is not None and self.pending[0] == position:
            raise _Broken(position, "two events at one position (inserted around it)")


def _merged(conn: Connection, start: int) -> Generator[tuple[int, bytes], None, None]:
    """Stored events and the digests of events retention removed, in position order."""
    removed = sorted(
        (int(p), bytes.fromhex(d))
        for p, d in conn.execute(
            sa.text("SELECT position, digest FROM chain_removed WHERE position > :s"), {"s": start}
        )
    )
    stored = chain.digests_after(conn, start, stream=True)
    i = 0
    try:
        for position, digest in stored:
            while i < len(removed) and removed[i][0] < position:
                yield removed[i]
                i += 1
            yield position, digest
    finally:
        stored.close()
    yield from removed[i:]


def _links(conn: Connection, start: int) -> Iterator[tuple[int, int, str, bytes]]:
    after = start
    while True:
        rows = conn.execute(
            sa.text(
                "SELECT last_position, first_position, head, digests FROM event_chain"
                " WHERE last_position > :a ORDER BY last_position LIMIT 500"
            ),
            {"a": after},
        ).all()
        if not rows:
            return
        for last, first, head, digests in rows:
            yield int(last), int(first), str(head), bytes(digests)
        after = int(rows[-1][0])


def _anchor(conn: Connection) -> tuple[int, str]:
    row = conn.execute(
        sa.text("SELECT position, head FROM chain_anchors ORDER BY position DESC LIMIT 1")
    ).first()
    return (0, chain.GENESIS) if row is None else (int(row[0]), str(row[1]))


def _start(conn: Connection, full: bool) -> tuple[int, str]:
    anchor = _anchor(conn)
    if full:
        return anchor
    row = conn.execute(
        sa.text("SELECT position, head FROM verify_checkpoints WHERE name = :n"), {"n": CHECKPOINT}
    ).first()
    if row is None or int(row[0]) <= anchor[0]:
        return anchor
    link = conn.execute(
        sa.text("SELECT head FROM event_chain WHERE last_position = :p"), {"p": row[0]}
    ).scalar()
    if link != row[1]:
        return anchor  # the checkpoint no longer matches its link: verify everything
    return int(row[0]), str(row[1])


def _save_checkpoint(store: Store, position: int, head: str) -> None:
    with store.writing("save the verify checkpoint") as conn:
        now = time_param(conn, datetime.now(UTC))
        params = {"n": CHECKPOINT, "p": position, "h": head, "t": now}
        updated = conn.execute(
            sa.text(
                "UPDATE verify_checkpoints SET position = :p, head = :h, verified_at = :t"
                " WHERE name = :n"
            ),
            params,
        ).rowcount
        if not updated:
            conn.execute(
                sa.text(
                    "INSERT INTO verify_checkpoints (name, position, head, verified_at)"
                    " VALUES (:n, :p, :h, :t)"
                ),
                params,
            )


def schema_problems(conn: Connection) -> list[str]:
    """What protects the log, checked: triggers present, enabled, unchanged (the store knows
    its backend's, ``store.protection``); no retention guard row left behind."""
    problems: list[str] = []
    if conn.execute(sa.text("SELECT count(*) FROM retention_guard")).scalar():
        problems.append("retention_guard holds a row outside a retention: DELETE is let through")
    return problems + protection.problems(conn)
