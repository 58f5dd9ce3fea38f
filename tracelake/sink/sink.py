"""``TraceSink``: what a production runner adds to its event loop so every event is persisted.

    with TraceSink() as sink:                                   # TRACELAKE_DATABASE_URL
        for event in sink.tap(runner.run_stream(plan, ...)):    # graph-tool-call
            send_sse(asdict(event))
        async for event in sink.atap(agent.run_events(...)):    # agentlane
            ...

``record()`` only appends to an in-memory queue (no I/O, no copying, no locks): a background
writer snapshots, scrubs, writes ahead to a disk spool and appends in batches. Nothing the sink
does can raise into the runner's loop, and the caller's event objects are never mutated.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, Self

from tracelake.config import Settings
from tracelake.sink import live, signals
from tracelake.sink.handoff import Handoff
from tracelake.sink.offload import start_scrub_process, state
from tracelake.sink.preparer import Item, Preparer, new_run_id
from tracelake.sink.shipper import CLOSED, Shipper
from tracelake.sink.spool import Spool, usage
from tracelake.sink.writer import Counters, Writer

log = logging.getLogger("tracelake.sink")

DEFAULT_SPOOL_DIR = ".tracelake/spool"
OnFull = Literal["block", "drop"]


def _masked(url: str) -> str:
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - an unparsable URL: say nothing of it
        return "<database>"


class TraceSink:
    """Persist runner events through the one pipeline (scrub, spool, append, replay)."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        spool_dir: str | Path | None = None,
        batch_size: int = 500,
        flush_interval: float = 0.05,
        max_queue: int = 100_000,
        retry_max: float = 5.0,
        db_timeout: float = 10.0,
        on_full: OnFull = "block",
        handle_sigterm: bool = True,
        settings: Settings | None = None,
        gc_freeze: bool = False,
        scrub_process: bool | None = None,
    ) -> None:
        """``db_timeout``: no database call may take longer; one that does is an outage.

        ``on_full``: what ``record()`` does when ``max_queue`` events wait in memory (only when
        neither the spool nor the database takes them): ``"block"`` (default) waits for room,
        ``"drop"`` drops the event and counts it in ``stats()["dropped"]``.

        ``handle_sigterm``: flush on SIGTERM, then let the process's own SIGTERM behaviour
        happen (see :mod:`tracelake.sink.signals`).

        ``gc_freeze=True`` builds the scrubber engine now and then calls ``gc.freeze()``, so
        full garbage collections stop rescanning its ~80k long-lived objects: the worst
        ``record()`` pause drops from 50-150 ms to 15-30 ms here (BENCHMARKS.md). It is process-wide,
        so it is the application's choice; call it once, after the application has loaded.

        ``scrub_process``: snapshot and scrub in a process of the sink's own (fed through a
        pipe: raw event data never touches disk), so the runner's process only pickles its
        events. Default: off unless ``TRACELAKE_SINK_SCRUB_PROCESS=1`` (see BENCHMARKS.md).
        Until it is ready, and for good if it dies or hangs, the writer thread scrubs."""
        self._args = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        if live.IN_SCRUBBER:
            self._stay_inert()
            return
        from tracelake.scrub import get_scrubber, load_pseudonym_key
        from tracelake.store import open_store

        if on_full not in ("block", "drop"):
            raise ValueError(f"on_full must be 'block' or 'drop', not {on_full!r}")
        settings = settings or Settings.from_env(database_url=database_url)
        url = settings.database_url
        key = load_pseudonym_key(url)
        scrubber = get_scrubber(key)
        self.store = open_store(url, bounded=db_timeout)
        self.max_queue, self.on_full = max_queue, on_full
        root = Path(spool_dir or os.environ.get("TRACELAKE_SPOOL_DIR") or DEFAULT_SPOOL_DIR)
        self.spool = Spool(root, max_segment_bytes=2 << 20)
        self.spool.open()
        self._queue: deque[Item] = deque()
        self.counters = Counters()
        self.handoff = Handoff(max_events=max(max_queue, batch_size))
        self._shipper = Shipper(
            self.store,
            self.spool,
            self.handoff,
            self.counters,
            timeout=db_timeout,
            retry_max=retry_max,
            safe_error=lambda exc: self._writer.safe_error(exc),
            where=_masked(url),
            busy=self._runner_producing,
        )
        self._writer = Writer(
            Preparer(scrubber, key, settings.max_depth),
            self.spool,
            self._queue,
            self.counters,
            self.handoff,
            self._shipper,
            batch_size=batch_size,
            flush_interval=flush_interval,
        )
        self._writer.offload = start_scrub_process(
            scrub_process, key, settings.max_depth, self._writer.wake, max_queue
        )
        self._shipper.runner_paused = self._writer.idle  # set when the queue is empty
        if gc_freeze:
            import gc

            # Text that matches: builds presidio's analyzer and loads the Korean lexicon.
            scrubber.warm_up()
            gc.collect()
            gc.freeze()
        self._closed = False
        self._late = 0  # record() after close()
        self._full_dropped = 0
        self._full_waits = 0
        self._warned_full = float("-inf")
        self._close_lock = threading.RLock()  # re-entrant: the SIGTERM handler closes too
        self._close_done = threading.Event()  # a close has finished (see close())
        self._thread = threading.Thread(target=self._writer.run, name="tracelake-sink", daemon=True)
        self._ship_thread = threading.Thread(
            target=self._shipper.run, name="tracelake-sink-db", daemon=True
        )
        signals.start_thread(self._thread)
        signals.start_thread(self._ship_thread)
        live.register(self)
        if handle_sigterm:
            signals.install(live.close_all_on_sigterm)

    def _stay_inert(self) -> None:
        """Created inside the sink's scrubber process, by a module of the runner's that the
        process imported to unpickle an event (an application that makes its sink at import):
        that sink does nothing there (no threads, spool, database or process of its own)."""
        self._closed, self._late, self._close_lock = True, 0, threading.RLock()
        self._close_done = threading.Event()
        self._close_done.set()
        log.info("tracelake sink: a sink made inside the scrubber process does nothing there")

    def _runner_producing(self) -> bool:
        """The newest queued event is younger than a flush interval: the runner is producing
        (the shipper then leaves the CPU to it; a queue that only waits for the scrubber is
        no reason to wait)."""
        try:
            return time.time() - self._queue[-1][2] < self._writer.flush_interval
        except IndexError:
            return False

    # -- the hot path --------------------------------------------------------------------
    def record(
        self, event: Any, run_id: str | None = None, trace_metadata: dict[str, Any] | None = None
    ) -> None:
        """Enqueue one event (a dataclass, dict, envelope or agentlane event). Never raises."""
        try:
            if self._closed:
                self._record_after_close()
                return
            if len(self._queue) >= self.max_queue and not self._make_room():
                if self._closed:  # closed while it waited for room: dropped, and counted
                    self._record_after_close()
                return
            self._queue.append((event, run_id, time.time(), trace_metadata))
        except Exception:  # noqa: BLE001 - never break the run
            self.counters.errors += 1

    # tap() and atap() inline record()'s fast path (this is the runner's thread: a method
    # call per event is a measurable share of a fast runner's own time); the rare cases
    # (closed, full queue) go through record().
    def tap(
        self,
        events: Iterable[Any],
        run_id: str | None = None,
        trace_metadata: dict[str, Any] | None = None,
    ) -> Iterator[Any]:
        """Yield the very same event objects, recording each (one run per tap)."""
        run = run_id or new_run_id()
        queue, append, now, limit = self._queue, self._queue.append, time.time, self.max_queue
        for event in events:
            if self._closed or len(queue) >= limit:
                self.record(event, run, trace_metadata)
            else:
                append((event, run, now(), trace_metadata))
            yield event

    async def atap(
        self,
        events: AsyncIterable[Any],
        run_id: str | None = None,
        trace_metadata: dict[str, Any] | None = None,
    ) -> AsyncIterator[Any]:
        """The asyncio variant of :meth:`tap` (for agentlane's ``run_events()``)."""
        run = run_id or new_run_id()
        queue, append, now, limit = self._queue, self._queue.append, time.time, self.max_queue
        async for event in events:
            if self._closed or len(queue) >= limit:
                self.record(event, run, trace_metadata)
            else:
                append((event, run, now(), trace_metadata))
            yield event

    def _record_after_close(self) -> None:
        self._late += 1
        if self._late == 1:
            log.error(
                "tracelake sink: record() after close(); the event is dropped (counted in "
                "stats()['dropped']). Record before closing the sink."
            )

    def _make_room(self) -> bool:
        """The queue is full (neither the spool nor the database takes batches): apply
        ``on_full``. True when the event may be enqueued. Warned once per 10 s episode."""
        now = time.monotonic()
        if now - self._warned_full > 10.0:
            self._warned_full = now
            log.warning(
                "tracelake sink queue is full (%d events not yet spooled: the disk and the "
                "database both refuse, or events come faster than they can be scrubbed); %s",
                self.max_queue,
                "dropping new events" if self.on_full == "drop" else "record() waits for room",
            )
        if self.on_full == "drop":
            self._full_dropped += 1
            return False
        self._full_waits += 1
        self._writer.wake.set()
        while len(self._queue) >= self.max_queue and self._thread.is_alive() and not self._closed:
            time.sleep(0.001)
        return not self._closed

    # -- lifecycle -----------------------------------------------------------------------
    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until everything recorded so far is in the spool (and, while the database is
        healthy, in the database too). False when that did not happen within ``timeout``."""
        deadline = time.monotonic() + timeout
        spooled = False
        while time.monotonic() < deadline:
            self._writer.wake.set()
            if not spooled:
                # Never spin: a thread that keeps taking the GIL back makes every blocking call
                # of the writer (file reads of a first import, spool writes) wait a switch
                # interval each (seen: a 2 s import of presidio took over 30 s).
                idle = self._writer.idle.wait(0.01)
                spooled = idle and not self._queue
                if idle and not spooled:
                    time.sleep(0.002)
                continue
            h = self.handoff
            if self._writer.holding or self._queue:
                spooled = False
                continue
            in_memory_only = h.memory_events or self._shipper.held
            if not in_memory_only and (
                self._shipper.state != "healthy"
                or not h.accepting
                or (not h.ready and self._shipper.idle.is_set())
            ):
                return True
            h.wake.set()
            time.sleep(0.005)
        return False

    def close(self, timeout: float = 30.0) -> None:
        """Flush and stop: every event is in the spool first (SIGKILL-safe), then the database
        gets until ``timeout`` to take it; what it did not take is replayed by the next sink."""
        # Closing on this thread before the sink is marked closed: a SIGTERM whose handler ran
        # in between (Pool.terminate() as a worker's exit hook began this close) found the sink
        # closed, so its own close() returned at once, and not closing here, so it handed the
        # signal on: the worker died with its queue neither appended nor spooled.
        signals.closing_here.depth = getattr(signals.closing_here, "depth", 0) + 1
        try:
            with self._close_lock:
                elsewhere, self._closed = self._closed, True
            if elsewhere:
                # Another thread's close is under way (this may be the SIGTERM handler, which
                # hands the signal on when this returns): wait for it, within the timeout.
                self._close_done.wait(timeout)
                return
            try:
                self._close(timeout)
            finally:
                self._close_done.set()
        finally:
            signals.closing_here.depth -= 1
            signals.after_close()

    def _close(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        self._writer.stopping = True
        self._writer.wake.set()
        self._thread.join(max(0.1, deadline - time.monotonic()))
        if self._thread.is_alive():  # a broken disk and a refusing database: take over
            log.warning("tracelake sink: the writer did not finish in %.0fs", timeout)
            self._writer.halt = True
            self._writer.wake.set()
            self._thread.join(2.0)
        self._shipper.stopping = True
        self.handoff.wake.set()
        self._ship_thread.join(max(0.1, deadline - time.monotonic()))
        if self._ship_thread.is_alive():
            self._shipper.halt = True
            self._shipper.interrupt()
            self.handoff.wake.set()
            self._ship_thread.join(2.0)
        self._writer.keep_what_is_left()
        if not self._ship_thread.is_alive():
            self._shipper.finish()
        self.spool.close()
        self._shipper.state = CLOSED
        self.store.dispose()
        live.SINKS.discard(self)

    def stats(self) -> dict[str, Any]:
        """Counters and gauges a runner can export as metrics."""
        c = self.counters
        backlog, oldest_backlog = self._shipper.lag()
        oldest = [t for t in (oldest_backlog,) if t is not None]
        queue = self._queue
        with contextlib.suppress(IndexError):  # the writer may empty it meanwhile
            oldest.append(queue[0][2])
        segments, spool_bytes = usage(self.spool.root)
        return {
            "recorded": c.recorded + len(queue),
            "written": c.written,
            "spooled": c.spooled,
            "replayed": c.replayed,
            "duplicates": c.duplicates,
            "quarantined": c.quarantined,
            "dropped": c.dropped + self._late + self._full_dropped,
            "dropped_after_close": self._late,
            "dropped_queue_full": self._full_dropped,
            "queue_full_waits": self._full_waits,
            "errors": c.errors,
            "queued": len(queue),
            "in_flight": self.handoff.ready_events,
            "replay_lag_events": backlog,
            "oldest_unwritten_age_s": round(time.time() - min(oldest), 3) if oldest else 0.0,
            "spool_segments": segments,
            "spool_bytes": spool_bytes,
            "health": self._shipper.state,
            "scrub_process": state(self._writer.offload),
            "spool_dir": str(self.spool.root),
        }

    @property
    def health(self) -> str:
        return self._shipper.state

    def wait_until_ready(self, timeout: float = 60.0) -> bool:
        """Wait until the scrubber process (if the sink uses one) is ready; a benchmark or a
        service that wants its first events off the runner's CPU too calls it after start."""
        deadline = time.monotonic() + timeout
        while state(self._writer.offload) == "starting" and time.monotonic() < deadline:
            time.sleep(0.02)
        return state(self._writer.offload) != "starting"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
