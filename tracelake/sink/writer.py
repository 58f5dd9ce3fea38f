"""The sink's spool writer: snapshot, scrub, and write each batch to the fsync'd spool.

This thread never talks to the database (see :mod:`tracelake.sink.shipper`): every batch it
takes from the in-memory queue is on disk within the flush interval whatever the database does,
then handed to the shipper. When the spool cannot be written (a full disk) batches go to the
shipper in memory and reach the database at its speed; only when both refuse do they wait here,
and ``record()`` applies the sink's ``on_full`` policy once the queue is full.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tracelake.admission import new_event, quarantine_item, safe_identifier, scrub
from tracelake.errors import ContractError
from tracelake.runners import InboundEvent, classify_object, to_jsonable
from tracelake.sink.handoff import Batch, Handoff
from tracelake.sink.spool import Spool, SpoolCorruptError
from tracelake.store import NewEvent, QuarantineItem, Store

if TYPE_CHECKING:
    from tracelake.scrub import Scrubber
    from tracelake.sink.shipper import Shipper

log = logging.getLogger("tracelake.sink")

# While the runner is producing, the writer pauses this long after each event (a real sleep,
# so the runner keeps the GIL: ``sleep(0)`` let the writer take it straight back before the
# runner's thread was scheduled, ~25% of a CPU-bound runner's time), as long as the oldest
# queued event is younger than ``PACE_LIMIT`` flush intervals; beyond that it only passes the
# GIL (``sleep(0)``) and works at full speed, so a long burst is spooled with a bounded lag.
PAUSE = 0.0005
PACE_LIMIT = 4


# What record() enqueues: (the caller's object, untouched, run_id, time.time() when it was
# recorded, trace_metadata). A plain tuple, not a dataclass: building it costs the runner's
# thread ~0.1 us instead of ~0.5 us per event (a Python-level __init__), and it is one object.
Item = tuple[Any, "str | None", float, "dict[str, Any] | None"]


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


Prepared = tuple[list[NewEvent], list[QuarantineItem], float]


class Writer:
    def __init__(
        self,
        scrubber: Scrubber,
        key: bytes,
        spool: Spool,
        queue: deque[Item],
        counters: Counters,
        handoff: Handoff,
        shipper: Shipper,
        *,
        max_depth: int,
        batch_size: int,
        flush_interval: float,
        new_run_id: Callable[[], str],
    ) -> None:
        self.scrubber, self.key, self.spool = scrubber, key, spool
        self.queue, self.counters = queue, counters
        self.handoff, self.shipper = handoff, shipper
        self.max_depth, self.batch_size = max_depth, batch_size
        self.flush_interval = flush_interval
        self.new_run_id = new_run_id
        self.wake = threading.Event()
        self.stopping = False
        self.halt = False  # set by close() when its timeout ran out
        self.idle = threading.Event()
        self._ids = itertools.count(1)
        self._id_prefix = uuid.uuid4().hex[:16]
        self._bare_run: str | None = None
        self._spool_ok = True
        self._spool_retry_at = 0.0
        self._safe_ids: dict[str, str] = {}
        self.pending: deque[Prepared] = deque()

    # -- the loop ----------------------------------------------------------------------
    def run(self) -> None:
        while not self.halt:
            self.idle.clear()
            self.shipper.check_overrun()
            try:
                self._step()
            except Exception as exc:  # noqa: BLE001 - the writer must survive anything
                self.counters.errors += 1
                log.error(  # no traceback: an exception's text could carry event data
                    "tracelake sink writer error (%s: %s); continuing",
                    type(exc).__name__,
                    self.safe_error(exc),
                )
            if self.stopping and not self.queue and not self.pending:
                self.idle.set()
                return
            if not self.queue and not self.pending:
                self.idle.set()
                self.wake.wait(self.flush_interval)
                self.wake.clear()
            elif self.pending:  # neither the spool nor the database takes it now: wait a bit
                self.wake.wait(min(0.05, self.flush_interval))
                self.wake.clear()

    def _step(self) -> None:
        if self.queue and not self.pending:
            batch = [self.queue.popleft() for _ in range(min(self.batch_size, len(self.queue)))]
            self.counters.recorded += len(batch)  # counted here: one thread, exact
            self.pending.append(self.prepare(batch))
        # A prepared batch leaves memory once it is in the spool or with the shipper.
        while self.pending and self._deliver(*self.pending[0]):
            self.pending.popleft()

    def _deliver(self, events: list[NewEvent], bad: list[QuarantineItem], oldest: float) -> bool:
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

    # -- snapshot + scrub --------------------------------------------------------------
    def prepare(self, batch: list[Item]) -> Prepared:
        """Snapshot and scrub each item; an item that cannot be made into an event is
        quarantined on its own (with its reason), never taking the batch down with it."""
        events: list[NewEvent] = []
        bad: list[QuarantineItem] = []
        seen = len(self.queue)
        for item in batch:
            # While the runner is producing (the queue grew since the last event), yield to it
            # after each event (see PAUSE): background work gives way to the run, the queue
            # absorbs the burst, and the writer catches up once the runner waits on I/O.
            if len(self.queue) != seen:
                seen = len(self.queue)
                time.sleep(self._pause())
            obj, given_run, recorded_at, meta = item
            now = datetime.fromtimestamp(recorded_at, UTC)
            try:
                inbound = self._snapshot(obj, meta)
                run_id = self._safe(self._run_of(inbound, given_run)) or self.new_run_id()
                event_id = self._safe(inbound.event_id) or f"{self._id_prefix}-{next(self._ids)}"
                inbound = InboundEvent(
                    inbound.source, inbound.type, inbound.event, run_id, event_id
                )
                events.append(new_event(inbound, scrub(self.scrubber, inbound), run_id, None, now))
            except ContractError as exc:
                bad.append(self._quarantined(given_run, exc.reason, exc.detail, now))
            except Exception as exc:  # noqa: BLE001 - e.g. a __str__ or to_dict() that raises
                detail = f"{type(exc).__name__} while taking a snapshot of the event"
                bad.append(self._quarantined(given_run, "unreadable_event", detail, now))
        return events, bad, batch[0][2] if batch else time.time()

    def _pause(self) -> float:
        try:
            lag = time.time() - self.queue[0][2]
        except IndexError:  # close() took the queue meanwhile
            return 0.0
        return PAUSE if lag < self.flush_interval * PACE_LIMIT else 0.0

    def _quarantined(
        self, given_run: str | None, reason: str, detail: str, now: datetime
    ) -> QuarantineItem:
        return quarantine_item(
            self.scrubber,
            self.key,
            origin="sink",
            reason=reason,
            detail=detail,
            raw=f"{self._id_prefix}-{next(self._ids)}".encode(),  # unique across processes
            recorded_at=now,
            run_id=self._safe(given_run) if isinstance(given_run, str) else None,
        )

    def _safe(self, value: str | None) -> str | None:
        """Run and event ids given by the caller, as they may be stored (see safe_identifier)."""
        if value is None:
            return None
        known = self._safe_ids.get(value)
        if known is None:
            if len(self._safe_ids) > 10_000:
                self._safe_ids.clear()
            known = self._safe_ids[value] = safe_identifier(self.scrubber, self.key, value) or ""
        return known

    def _snapshot(self, obj: Any, trace_metadata: dict[str, Any] | None) -> InboundEvent:
        """A private copy of the caller's event (their objects are never touched)."""
        for attempt in range(3):
            try:
                inbound = classify_object(obj, self.max_depth)
                break
            except RuntimeError as exc:  # the caller changed a dict while we copied it: again
                if "during iteration" not in str(exc):
                    raise  # e.g. a to_dict() that raises RuntimeError: unreadable, not unstable
                if attempt == 2:
                    raise ContractError(
                        "unstable_object", "the event changed while it was copied"
                    ) from None
        if trace_metadata:
            meta = to_jsonable(trace_metadata, self.max_depth)
            own = inbound.event.get("trace_metadata")
            inbound.event["trace_metadata"] = {**meta, **own} if isinstance(own, dict) else meta
        return inbound

    def _run_of(self, inbound: InboundEvent, given_run: str | None) -> str:
        if given_run is not None:
            return given_run
        if inbound.run_id is not None:
            return inbound.run_id
        if inbound.starts_run or self._bare_run is None:
            self._bare_run = self.new_run_id()
        return self._bare_run

    def safe_error(self, exc: BaseException) -> str:
        """An exception's first line, scrubbed: log lines are a path to disk too."""
        try:
            return self.scrubber.scrub_text(_short(exc), max_len=200)
        except Exception:  # noqa: BLE001 - if even that fails, say only what kind it was
            return type(exc).__name__


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
                    done.quarantined += store.quarantine.add(record.items)  # type: ignore[arg-type]
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


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]
