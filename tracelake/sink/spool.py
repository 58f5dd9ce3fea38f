"""The sink's on-disk spool: append-only, fsync'd segment files of *scrubbed* batches.

Layout: ``<root>/<owner>/seg-<n>.jsonl``. Each live sink owns one ``<owner>`` folder (named so
that folders sort by creation time) and holds an exclusive ``flock`` on ``<owner>/.lock`` while
it runs. A folder whose lock is free belongs to a sink that is gone (closed, crashed, killed);
the next sink, or ``tracelake spool drain``, replays it. Each line is ``<crc32> <json>``; a torn
last line (a crash mid-write) fails its checksum and is ignored — it was never acknowledged.

Replay order: owners oldest first, segments in order, records in order. A segment is deleted
only after every record in it was appended; replaying a record twice is harmless because
appends are idempotent (client ``event_id`` / ``(run_id, seq)``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
import uuid
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from tracelake.store.records import NewEvent, QuarantineItem
from tracelake.store.schema import dumps

Kind = Literal["events", "quarantine"]


class SpoolCorruptError(Exception):
    """A spool segment is damaged in the middle (not a torn tail)."""


LOCK = ".lock"


@dataclass(frozen=True, slots=True)
class SpoolRecord:
    kind: Kind
    items: list[NewEvent] | list[QuarantineItem]


def encode(kind: Kind, items: Sequence[NewEvent] | Sequence[QuarantineItem]) -> bytes:
    # One dumps() per item, not one for the batch: a single long C call would hold the GIL
    # (and so the runner's thread) for the whole batch.
    parts = ",".join(dumps(_plain(i)) for i in items)
    body = f'{{"kind":"{kind}","items":[{parts}]}}'.encode()
    return f"{zlib.crc32(body):08x} ".encode() + body + b"\n"


def decode(line: bytes) -> SpoolRecord | None:
    """A record, or None for a torn or corrupt line."""
    if not line.endswith(b"\n") or len(line) < 10:
        return None
    crc, body = line[:8], line[9:-1]
    try:
        if int(crc, 16) != zlib.crc32(body):
            return None
        data = json.loads(body)
    except ValueError:
        return None
    kind = data["kind"]
    if kind == "events":
        return SpoolRecord(kind, [NewEvent(**_typed(i)) for i in data["items"]])
    return SpoolRecord(kind, [QuarantineItem(**_typed(i)) for i in data["items"]])


class Encoded(Sequence[Any]):
    """A spool record encoded elsewhere (by the scrubber process): the spool writes its bytes
    as they are, and its items are decoded only when something reads them (the database
    shipper, which works while the runner waits), so the runner's process never encodes it."""

    __slots__ = ("_items", "kind", "line", "n")

    def __init__(self, kind: Kind, line: bytes, n: int) -> None:
        self.kind, self.line, self.n = kind, line, n
        self._items: list[Any] | None = None

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: Any) -> Any:
        return self.items[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    @property
    def items(self) -> list[Any]:
        if self._items is None:
            record = decode(self.line) if self.n else None
            if record is None and self.n:  # never "no events": say the record is damaged
                raise SpoolCorruptError(f"an encoded record of {self.n} {self.kind} is damaged")
            self._items = [] if record is None else list(record.items)
        return self._items


_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(item: NewEvent | QuarantineItem) -> dict[str, Any]:
    """A shallow field dict (``asdict`` would deep-copy every payload for nothing; the field
    names are looked up once per class, ``fields()`` per item was a tenth of the writer)."""
    names = _FIELDS.get(type(item))
    if names is None:
        names = _FIELDS[type(item)] = tuple(f.name for f in fields(item))
    out = {}
    for name in names:
        v = getattr(item, name)
        out[name] = v.isoformat() if isinstance(v, datetime) else v
    return out


def _typed(d: dict[str, Any]) -> dict[str, Any]:
    return {**d, "recorded_at": datetime.fromisoformat(d["recorded_at"])}


class Spool:
    def __init__(self, root: Path, max_segment_bytes: int = 8 << 20) -> None:
        self.root = Path(root)
        self.max_segment_bytes = max_segment_bytes
        self.owner: Path | None = None
        self._lock_fd: int | None = None
        self._fd: int | None = None
        self._segment: Path | None = None
        self._size = 0
        self._n = 0

    # -- owning a folder ---------------------------------------------------------------
    def open(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = f"{time.time_ns():020d}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        owner = self.root / name
        owner.mkdir(mode=0o700)
        fd = os.open(owner / LOCK, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.owner, self._lock_fd = owner, fd
        _fsync_dir(self.root)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.owner is not None and self._lock_fd is not None:
            with contextlib.suppress(OSError):
                if not any(self.owner.glob("seg-*.jsonl")):
                    (self.owner / LOCK).unlink()
                    self.owner.rmdir()
                    _fsync_dir(self.root)
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- writing -----------------------------------------------------------------------
    @property
    def current(self) -> Path | None:
        """The segment being written (None when sealed)."""
        return self._segment if self._fd is not None else None

    def append(
        self, kind: Kind, items: Sequence[NewEvent] | Sequence[QuarantineItem]
    ) -> Path | None:
        """Write one record and fsync it; returns (the segment) only when it is on disk."""
        if not items:
            return None
        assert self.owner is not None, "Spool.open() first"
        if isinstance(items, Encoded) and items.kind == kind:
            data = items.line
        else:
            data = encode(kind, items)
        if self._fd is None or self._size + len(data) > self.max_segment_bytes:
            self._rotate()
        assert self._fd is not None
        start = self._size
        try:
            view = memoryview(data)
            while view:  # os.write may write less than asked (a filling disk)
                view = view[os.write(self._fd, view) :]
            os.fsync(self._fd)
        except OSError:
            with contextlib.suppress(OSError):  # never leave half a record behind
                os.ftruncate(self._fd, start)
            raise
        self._size += len(data)
        return self._segment

    def _rotate(self) -> None:
        assert self.owner is not None
        if self._fd is not None:
            os.close(self._fd)
        self._n += 1
        self._segment = self.owner / f"seg-{time.time_ns():020d}-{self._n:06d}.jsonl"
        self._fd = os.open(self._segment, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        self._size = 0
        _fsync_dir(self.owner)

    def seal(self) -> None:
        """Stop writing to the current segment, so that it can be replayed and removed."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def discard_current(self) -> None:
        """Every record written so far was appended: truncate instead of growing forever."""
        if self._fd is not None and self._size > self.max_segment_bytes // 2:
            os.ftruncate(self._fd, 0)
            os.fsync(self._fd)
            self._size = 0

    def discard_all_mine(self) -> None:
        """At a clean close with nothing pending: remove this sink's (acknowledged) segments."""
        self.seal()
        if self.owner is not None:
            for seg in self.owner.glob("seg-*.jsonl"):
                seg.unlink(missing_ok=True)
            _fsync_dir(self.owner)

    # -- replay ------------------------------------------------------------------------
    def replayable(self) -> list[Path]:
        """Sealed segments of this sink and all segments of owners that are gone, in order."""
        if not self.root.is_dir():
            return []
        found: list[Path] = []
        for owner in sorted(p for p in self.root.iterdir() if p.is_dir()):
            mine = owner == self.owner
            if not mine and not _is_abandoned(owner):
                continue
            for seg in sorted(owner.glob("seg-*.jsonl")):
                if mine and seg == self._segment and self._fd is not None:
                    continue
                found.append(seg)
        return found

    @staticmethod
    def read(segment: Path) -> Iterator[SpoolRecord]:
        """The segment's records, up to a torn tail (a crash mid-write, never acknowledged).

        Raises :class:`SpoolCorruptError` after the good records when a damaged line is
        followed by more data: that is not a torn tail, and the segment must be kept.
        """
        with segment.open("rb") as f:
            for line in f:
                record = decode(line)
                if record is None:
                    if f.read(1):
                        raise SpoolCorruptError(f"{segment} has a damaged record before its end")
                    return
                yield record

    @staticmethod
    def read_merged(segment: Path, max_events: int = 5000) -> Iterator[SpoolRecord]:
        """:meth:`read` with consecutive event records merged up to ``max_events`` (one
        database transaction for several batches on replay); order is kept."""
        pending: list[NewEvent] = []
        records = Spool.read(segment)
        while True:
            try:
                record = next(records, None)
            except SpoolCorruptError:
                if pending:  # the good records before the damage are replayed first
                    yield SpoolRecord("events", pending)
                raise
            if (
                record is None
                or record.kind != "events"
                or (pending and len(pending) + len(record.items) > max_events)
            ):
                if pending:
                    yield SpoolRecord("events", pending)
                    pending = []
                if record is None:
                    return
            if record.kind == "events":
                pending.extend(record.items)  # type: ignore[arg-type]
            else:
                yield record

    def quarantine_segment(self, segment: Path) -> Path:
        """Set a damaged segment aside (kept for an operator, never replayed again)."""
        target = segment.with_suffix(".corrupt")
        segment.rename(target)
        _fsync_dir(segment.parent)
        return target

    def remove(self, segment: Path) -> None:
        segment.unlink(missing_ok=True)
        owner = segment.parent
        _fsync_dir(owner)
        if owner != self.owner and not any(owner.glob("seg-*.jsonl")):
            with contextlib.suppress(OSError):
                (owner / LOCK).unlink()
                owner.rmdir()


def status(root: Path) -> dict[str, Any]:
    """What is waiting in a spool folder (read-only; safe while sinks run)."""
    segments = sorted(Path(root).glob("*/seg-*.jsonl")) if Path(root).is_dir() else []
    events = records = 0
    for seg in segments:
        with contextlib.suppress(SpoolCorruptError):
            for record in Spool.read(seg):
                records += 1
                events += len(record.items) if record.kind == "events" else 0
    owners = {s.parent for s in segments}
    return {
        "root": str(root),
        "segments": len(segments),
        "records": records,
        "events": events,
        "bytes": sum(s.stat().st_size for s in segments),
        "owners": len(owners),
        "owners_alive": sum(not _is_abandoned(o) for o in owners),
        "oldest": min((s.stat().st_mtime for s in segments), default=None),
        "corrupt": len(list(Path(root).glob("*/seg-*.corrupt"))) if Path(root).is_dir() else 0,
    }


def usage(root: Path) -> tuple[int, int]:
    """(segments, bytes) waiting in a spool folder: a directory listing, no reading."""
    segments = total = 0
    with contextlib.suppress(OSError):
        for seg in Path(root).glob("*/seg-*.jsonl"):
            with contextlib.suppress(OSError):
                total += seg.stat().st_size
                segments += 1
    return segments, total


def _is_abandoned(owner: Path) -> bool:
    try:
        fd = os.open(owner / LOCK, os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
