"""What the sink's two threads share: the spool writer hands batches to the database shipper.

The writer (snapshot, scrub, fsync to the spool) never touches the database; the shipper (append
to the database, replay the spool) never touches the in-memory queue. Between them is this
hand-off, guarded by one lock:

* ``ready``: batches already in the spool (``segment`` set) or, when the spool disk refuses,
  held only in memory (``segment is None``), in the order they were recorded.
* ``accepting``: while False (an outage, a hung call, a backlog being replayed, or ``ready``
  full) the writer only spools; the shipper later seals the spool and replays it from disk, so
  everything reaches the database in order, and memory stays bounded.
* per-segment counts, so a segment whose every record was appended is deleted.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tracelake.store import NewEvent, QuarantineItem


@dataclass(slots=True)
class Batch:
    events: Sequence[NewEvent]  # a list, or the scrubber process's encoded record (spool.Encoded)
    bad: Sequence[QuarantineItem]
    segment: Path | None  # None: the spool refused it; it exists only in memory
    records: int  # spool records it took in ``segment``
    oldest: float  # time.time() when its first event was recorded

    @property
    def size(self) -> int:
        return len(self.events) + len(self.bad)


@dataclass(slots=True)
class Handoff:
    max_events: int
    lock: threading.RLock = field(default_factory=threading.RLock)  # RLock: SIGTERM handler
    ready: deque[Batch] = field(default_factory=deque)
    ready_events: int = 0
    memory_events: int = 0  # events in ``ready`` that exist only in memory
    accepting: bool = True
    written: dict[Path, int] = field(default_factory=dict)  # records handed over, per segment
    acked: dict[Path, int] = field(default_factory=dict)  # records appended, per segment
    # Segments holding records that were *not* handed over: never deleted on acknowledgement,
    # only after the catch-up replayed them.
    dirty: set[Path] = field(default_factory=set)
    backlog_events: int = 0  # events in the spool that were not handed over (replay lag)
    backlog_since: float | None = None  # when the oldest of them was recorded
    wake: threading.Event = field(default_factory=threading.Event)

    def push(self, batch: Batch) -> bool:
        """Hand a batch over (caller holds ``lock``); False when it must stay where it is."""
        if not self.accepting or self.ready_events + batch.size > self.max_events:
            if batch.segment is not None:
                self.accepting = False  # the shipper will replay the spool from disk
                self.mark_backlog(batch)
                self.dirty.add(batch.segment)
            return False
        self.ready.append(batch)
        self.ready_events += batch.size
        if batch.segment is None:
            self.memory_events += batch.size
        else:
            self.written[batch.segment] = self.written.get(batch.segment, 0) + batch.records
        self.wake.set()
        return True

    def mark_backlog(self, batch: Batch) -> None:
        self.backlog_events += len(batch.events)
        if self.backlog_since is None or batch.oldest < self.backlog_since:
            self.backlog_since = batch.oldest

    def pop(self) -> Batch | None:
        with self.lock:
            if not self.ready:
                return None
            batch = self.ready.popleft()
            self.ready_events -= batch.size
            if batch.segment is None:
                self.memory_events -= batch.size
            return batch

    def oldest(self) -> float | None:
        with self.lock:
            times = [b.oldest for b in (self.ready[0],)] if self.ready else []
        if self.backlog_since is not None:
            times.append(self.backlog_since)
        return min(times, default=None)
