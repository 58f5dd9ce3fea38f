"""The sink's spool writer: snapshot, scrub, and write each batch to the fsync'd spool.

This thread never talks to the database (see :mod:`tracelake.sink.shipper`): every batch it
takes from the in-memory queue is on disk within the flush interval whatever the database does,
then handed to the shipper. When the spool cannot be written (a full disk) batches go to the
shipper in memory and reach the database at its speed; only when both refuse do they wait here,
and ``record()`` applies the sink's ``on_full`` policy once the queue is full.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracelake.sink.handoff import Batch, Handoff
from tracelake.sink.offload import Taken
from tracelake.sink.preparer import Item, Prepared, Preparer
from tracelake.sink.spool import Spool, SpoolCorruptError
from tracelake.store import NewEvent, QuarantineItem, Store

if TYPE_CHECKING:
    from tracelake.sink.offload import ScrubProcess
    from tracelake.sink.shipper import Shipper

log = logging.getLogger("tracelake.sink")

# While the runner is producing, the writer pauses this long after each event (a real sleep,
# so the runner keeps the GIL: ``sleep(0)`` let the writer take it straight back before the
# runner's thread was scheduled, ~25% of a CPU-bound runner's time), as long as the oldest
# queued event is younger than ``PACE_LIMIT`` flush intervals; beyond that it only passes the
# GIL (``sleep(0)``) and works at full speed, so a long burst is spooled with a bounded lag.
PAUSE = 0.0005
PACE_LIMIT = 4


@dataclass(slots=True)
class Counters:
    recorded: int = 0
    written: int = 0
    spooled: int = 0  # events the database did not take live: kept in the spool, replayed
    replayed: int = 0
    duplicates: int = 0
    quarantined: int = 0
    dropped: int = 0  # at close, when neither the spool nor the database took a batch
    errors: int = 0


class Writer:
    def __init__(
        self,
        preparer: Preparer,
        spool: Spool,
        queue: deque[Item],
        counters: Counters,
        handoff: Handoff,
        shipper: Shipper,
        *,
        batch_size: int,
        flush_interval: float,
        offload: ScrubProcess | None = None,
    ) -> None:
        self.preparer, self.spool = preparer, spool
        self.queue, self.counters = queue, counters
        self.handoff, self.shipper = handoff, shipper
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.offload = offload
        self.wake = threading.Event()
        self.stopping = False
        self.halt = False  # set by close() when its timeout ran out
        self.idle = threading.Event()
        self._spool_ok = True
        self._spool_retry_at = 0.0
        self._seen = 0  # queue length at the last look (the runner is producing if it grew)
        self.pending: deque[Prepared] = deque()
        self.in_hand = 0  # events being prepared on this thread right now

    @property
    def holding(self) -> bool:
        """Taken from the queue and not yet in the spool or with the shipper."""
        return bool(self.pending) or (self.offload is not None and self.offload.outstanding)

    # -- the loop ----------------------------------------------------------------------
    def run(self) -> None:
        if self.shipper.store.embedded:
            # A new SQLite file gets its schema from the shipper first: scrubbing before it
            # exists would find no subject-secret table and keep events as minimal records.
            self.shipper.schema_checked.wait(10.0)
        if self.offload is not None:
            # The fallback when the scrubber process dies should not import presidio mid-run
            # (seconds of import on the runner's GIL): load it now, while the process starts.
            self.preparer.scrubber.warm_up()
        while not self.halt:
            self.idle.clear()
            self.shipper.check_overrun()
            wait = 0.0
            try:
                wait = self._step()
            except Exception as exc:  # noqa: BLE001 - the writer must survive anything
                self.counters.errors += 1
                log.error(  # no traceback: an exception's text could carry event data
                    "tracelake sink writer error (%s: %s); continuing",
                    type(exc).__name__,
                    self.safe_error(exc),
                )
            if self.stopping and not self.queue and not self.holding:
                self.idle.set()
                return
            if not self.queue and not self.holding:
                self.idle.set()
                wait = self.flush_interval
            elif self.pending:  # neither the spool nor the database takes it now: wait a bit
                wait = min(0.05, self.flush_interval)
            if wait:
                self.wake.wait(wait)
                self.wake.clear()

    def _step(self) -> float:
        """One round; returns how long to wait before the next (0: go on)."""
        wait = 0.0
        off = self.offload
        if off is not None:
            self._collect(off)
            off = self.offload
        if self.queue and not self.pending:
            if off is None or not (off.usable or off.outstanding):
                # no scrubber process (or it is still starting): prepare here
                self.pending.append(self._prepare_here(self._take()))
            else:
                wait = self._hand_over(off)
        if off is not None:
            off.pump()
        # A prepared batch leaves memory once it is in the spool or with the shipper.
        while self.pending and self._deliver(*self.pending[0]):
            self.pending.popleft()
        if not wait and not self.queue and not self.pending and off is not None:
            # Only the process has work: sleep until it answers (its reader sets ``wake``),
            # not spin on the runner's GIL (a spin here cost a fast runner ~40% of its speed).
            wait = 0.05
        return wait

    def _hand_over(self, off: ScrubProcess) -> float:
        """Pickle everything queued for the scrubber process in one go (no system call in
        between to lose the GIL); returns how long to wait when it cannot be done now."""
        if not off.usable or not off.has_room:
            return 0.05  # woken when an answer arrives
        if self._partial_and_young():
            return 0.005  # pickle whole batches (less of the runner's time), or old ones
        self._submit(off)
        while self.queue and off.has_room and not self._partial_and_young():
            self._submit(off)
        return 0.0

    def _submit(self, off: ScrubProcess) -> None:
        batch = self._take()
        self.in_hand = len(batch)  # pickling calls the objects' to_dict(): see _prepare_here
        try:
            off.submit(batch)
        finally:
            self.in_hand = 0

    def _take(self) -> list[Item]:
        batch = [self.queue.popleft() for _ in range(min(self.batch_size, len(self.queue)))]
        self.counters.recorded += len(batch)  # counted here: one thread, exact
        self._seen = len(self.queue)
        return batch

    def _collect(self, off: ScrubProcess) -> None:
        off.check()
        for done in off.collect():
            if isinstance(done, Taken):
                done = (
                    self._prepare_here(done.items)
                    if done.items is not None
                    else self.preparer.unreadable(done.size, done.oldest, done.why)
                )
            self.pending.append(done)
        if off.dead is not None and not off.outstanding:
            if not self.stopping:
                log.warning(
                    "tracelake sink: the scrubber process %d is gone (%s); its batches were "
                    "prepared here, and from now on the writer thread scrubs",
                    off.pid,
                    off.dead,
                )
            off.close(0.0)
            self.offload = None

    def _prepare_here(self, items: list[Item]) -> Prepared:
        self.in_hand = len(items)  # what close() loses if its timeout ends meanwhile
        try:
            return self.preparer.prepare(items, self._between)
        finally:
            self.in_hand = 0

    def take_back(self) -> list[Prepared]:
        """At close: everything taken from the queue and not delivered, in order (batches
        still with the scrubber process are prepared here)."""
        if self.offload is not None:
            self.offload.dead = self.offload.dead or "the sink closed"
            self._collect(self.offload)  # every batch still in flight, prepared here
        taken = list(self.pending)
        self.pending.clear()
        return taken

    def _partial_and_young(self) -> bool:
        """Fewer than a batch of events wait and the oldest is younger than a quarter of the
        flush interval: wait for more (one pickle per batch costs less than several)."""
        if self.stopping or len(self.queue) >= self.batch_size:
            return False
        try:
            return time.time() - self.queue[0][2] < self.flush_interval / 4
        except IndexError:  # close() took the queue meanwhile
            return False

    def _between(self) -> None:
        # While the runner is producing (the queue grew since the last event), yield to it
        # after each event (see PAUSE): background work gives way to the run, the queue
        # absorbs the burst, and the writer catches up once the runner waits on I/O.
        if len(self.queue) != self._seen:
            self._seen = len(self.queue)
            time.sleep(self._pause())

    def _deliver(
        self, events: Sequence[NewEvent], bad: Sequence[QuarantineItem], oldest: float
    ) -> bool:
        h = self.handoff
        with h.lock:
            if self.shipper.held or h.memory_events:
                # Older batches exist only in memory (the disk was full): stay behind them, or
                # a disk that recovers before the database would put newer events first.
                return h.push(Batch(events, bad, None, 0, oldest))
        if self._spool_ok or time.monotonic() >= self._spool_retry_at:
            try:
                with h.lock:
                    seg = self.spool.append("events", events)
                    qseg = self.spool.append("quarantine", bad)
                    batch = Batch(events, bad, seg or qseg, bool(events) + bool(bad), oldest)
                    if not h.push(batch):
                        self.counters.spooled += len(events)
            except Exception as exc:  # noqa: BLE001 - a full or broken disk
                self._spool_failed(exc)
            else:
                if not self._spool_ok:
                    self._spool_ok = True
                    log.warning(
                        "tracelake sink: the spool at %s is writable again", self.spool.root
                    )
                return True
        with h.lock:  # straight through to the database, at its speed
            return h.push(Batch(events, bad, None, 0, oldest))

    def _spool_failed(self, exc: BaseException) -> None:
        if self._spool_ok:
            log.error(
                "tracelake sink cannot write its spool at %s (%s); writing straight to the "
                "database while it is full",
                self.spool.root,
                self.safe_error(exc),
            )
        self._spool_ok = False
        self._spool_retry_at = time.monotonic() + 1.0

    def _pause(self) -> float:
        try:
            lag = time.time() - self.queue[0][2]
        except IndexError:  # close() took the queue meanwhile
            return 0.0
        return PAUSE if lag < self.flush_interval * PACE_LIMIT else 0.0

    def safe_error(self, exc: BaseException) -> str:
        return self.preparer.safe_error(exc)

    def keep_what_is_left(self) -> None:
        """At close, after both threads stopped: batches only in memory (the queue, this
        writer, the shipper) go to the spool, or are counted as dropped when the disk refuses
        too."""
        leftover = [self.queue.popleft() for _ in range(len(self.queue))]
        self.counters.recorded += len(leftover)
        if self.in_hand:  # the thread is still inside them (a to_dict() that does not return)
            self.counters.dropped += self.in_hand
            log.error(
                "tracelake sink: close() ran out of time while the writer was preparing %d "
                "events (an object's to_dict() or snapshot did not return); they are lost. "
                "Give close() a longer timeout",
                self.in_hand,
            )
        batches = self.take_back()
        if leftover:
            batches.append(self.preparer.prepare(leftover))
        h = self.handoff
        with h.lock:
            memory = [*self.shipper.held, *(b for b in h.ready if b.segment is None)]
            self.shipper.held.clear()
            h.ready.clear()
        batches += [(b.events, b.bad, b.oldest) for b in memory]
        for events, bad, _oldest in batches:
            try:
                with h.lock:
                    for seg in (
                        self.spool.append("events", events),
                        self.spool.append("quarantine", bad),
                    ):
                        if seg is not None:
                            h.dirty.add(seg)  # never deleted by finish()
                self.counters.spooled += len(events)
            except Exception as exc:  # noqa: BLE001 - disk and database both refused
                self.counters.dropped += len(events)
                log.error(
                    "tracelake sink: %d events could be written neither to the database nor "
                    "to the spool at %s (%s) and are lost",
                    len(events),
                    self.spool.root,
                    type(exc).__name__,
                )


@dataclass(slots=True)
class Replayed:
    segments: int = 0
    appended: int = 0
    duplicates: int = 0
    quarantined: int = 0
    corrupt: int = 0


def replay(spool: Spool, store: Store, progress: Callable[[], None] = lambda: None) -> Replayed:
    """Append every replayable spool record in order; delete each segment once it is in.

    Raises the store's error when the database refuses; what was not appended stays spooled.
    Idempotent: a record appended before a crash is recognised as a duplicate. ``progress``
    is called before each record's database call (the drain's watchdog).
    """
    done = Replayed()
    for segment in spool.replayable():
        try:
            for record in spool.read_merged(segment):
                progress()
                if record.kind == "events":
                    result = store.append(record.items)  # type: ignore[arg-type]
                    done.appended += result.appended
                    done.duplicates += result.duplicates
                    done.quarantined += len(result.conflicts) + result.rejected
                else:
                    done.quarantined += store.add_to_quarantine(record.items)  # type: ignore[arg-type]
        except SpoolCorruptError:
            kept = spool.quarantine_segment(segment)
            log.error(
                "tracelake spool: %s is damaged after its readable records; those were "
                "replayed, the file is kept as %s for inspection",
                segment.name,
                kept,
            )
            done.corrupt += 1
            continue
        spool.remove(segment)
        done.segments += 1
    return done
