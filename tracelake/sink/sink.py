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

import atexit
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any, Self

from tracelake.config import Settings
from tracelake.sink.spool import Spool
from tracelake.sink.writer import CLOSED, Counters, Item, Writer

log = logging.getLogger("tracelake.sink")

DEFAULT_SPOOL_DIR = ".tracelake/spool"


def new_run_id() -> str:
    return f"run-{uuid.uuid4().hex}"


class TraceSink:
    """Persist runner events through the one pipeline (scrub, spool on outage, append)."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        spool_dir: str | Path | None = None,
        batch_size: int = 500,
        flush_interval: float = 0.05,
        max_queue: int = 100_000,
        retry_max: float = 30.0,
        settings: Settings | None = None,
        gc_freeze: bool = False,
    ) -> None:
        """``gc_freeze=True`` builds the scrubber engine now and then calls ``gc.freeze()``, so
        full garbage collections stop rescanning its ~80k long-lived objects: the worst
        ``record()`` pause drops from 50-150 ms to 15-30 ms here (BENCHMARKS.md). It is process-wide,
        so it is the application's choice; call it once, after the application has loaded."""
        import os

        from tracelake.wiring import open_components

        settings = settings or Settings.from_env(database_url=database_url)
        parts = open_components(settings, check_schema=False)
        self.store = parts.store
        self.max_queue = max_queue
        root = Path(spool_dir or os.environ.get("TRACELAKE_SPOOL_DIR") or DEFAULT_SPOOL_DIR)
        self.spool = Spool(root)
        self.spool.open()
        self._queue: deque[Item] = deque()
        self.counters = Counters()
        self._writer = Writer(
            parts.store,
            parts.scrubber,
            parts.key,
            self.spool,
            self._queue,
            self.counters,
            max_depth=settings.max_depth,
            batch_size=batch_size,
            flush_interval=flush_interval,
            retry_max=retry_max,
            new_run_id=new_run_id,
        )
        if gc_freeze:
            import gc

            parts.scrubber.scrub_text("warm up the engine")
            gc.collect()
            gc.freeze()
        self._closed = False
        self._warned_full = float("-inf")
        self._close_lock = threading.Lock()
        self._thread = threading.Thread(target=self._writer.run, name="tracelake-sink", daemon=True)
        self._thread.start()
        _live.add(self)

    # -- the hot path --------------------------------------------------------------------
    def record(
        self, event: Any, run_id: str | None = None, trace_metadata: dict[str, Any] | None = None
    ) -> None:
        """Enqueue one event (a dataclass, dict, envelope or agentlane event). Never raises."""
        try:
            if len(self._queue) >= self.max_queue:
                self._backpressure()
            self._queue.append(Item(event, run_id, time.time(), trace_metadata))
        except Exception:  # noqa: BLE001 - never break the run
            self.counters.errors += 1

    def tap(
        self,
        events: Iterable[Any],
        run_id: str | None = None,
        trace_metadata: dict[str, Any] | None = None,
    ) -> Iterator[Any]:
        """Yield the very same event objects, recording each (one run per tap)."""
        run = run_id or new_run_id()
        for event in events:
            self.record(event, run, trace_metadata)
            yield event

    async def atap(
        self,
        events: AsyncIterable[Any],
        run_id: str | None = None,
        trace_metadata: dict[str, Any] | None = None,
    ) -> AsyncIterator[Any]:
        """The asyncio variant of :meth:`tap` (for agentlane's ``run_events()``)."""
        run = run_id or new_run_id()
        async for event in events:
            self.record(event, run, trace_metadata)
            yield event

    def _backpressure(self) -> None:
        """The queue is full: wait for the writer (which spools when the database is slow).

        This is the one place record() can wait; it never drops. Warned once per episode.
        """
        now = time.monotonic()
        if now - self._warned_full > 10.0:  # at most one line per 10 s of back-pressure
            self._warned_full = now
            log.warning("tracelake sink queue is full (%d); waiting for the writer", self.max_queue)
        self._writer.wake.set()
        while len(self._queue) >= self.max_queue and self._thread.is_alive():
            time.sleep(0.001)

    # -- lifecycle -----------------------------------------------------------------------
    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until everything recorded so far is written or spooled."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._writer.wake.set()
            if not self._queue and self._writer.idle.wait(0.01) and not self._queue:
                return True
        return False

    def close(self, timeout: float = 30.0) -> None:
        """Flush and stop. Returns when every event is in the database or in the spool."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._writer.stopping = True
        self._writer.wake.set()
        self._thread.join(timeout)
        if self._thread.is_alive():  # a hung database or a broken disk: take over
            log.warning(
                "tracelake sink: the writer did not finish in %.0fs; spooling the rest", timeout
            )
            self._writer.halt = True
            self._writer.wake.set()
            self._thread.join(5.0)
            leftover = [self._queue.popleft() for _ in range(len(self._queue))]
            self.counters.recorded += len(leftover)
            batches = list(self._writer.pending)
            self._writer.pending.clear()
            if leftover:
                batches.append(self._writer.prepare(leftover))
            for events, bad in batches:
                try:
                    self.spool.append("events", events)
                    self.spool.append("quarantine", bad)
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
        self.spool.close()
        self._writer.state = CLOSED
        self.store.dispose()
        _live.discard(self)

    def stats(self) -> dict[str, Any]:
        c = self.counters
        return {
            "recorded": c.recorded + len(self._queue),
            "written": c.written,
            "spooled": c.spooled,
            "replayed": c.replayed,
            "quarantined": c.quarantined,
            "dropped": c.dropped,
            "errors": c.errors,
            "queued": len(self._queue),
            "health": self._writer.state,
            "spool_dir": str(self.spool.root),
        }

    @property
    def health(self) -> str:
        return self._writer.state

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Strong references: a sink the application dropped without close() must still be flushed at
# exit (its writer thread is a daemon and would be killed with its queue).
_live: set[TraceSink] = set()


@atexit.register
def _close_all() -> None:  # interpreter exit: flush with a bounded timeout
    for sink in list(_live):
        try:
            sink.close(timeout=10.0)
        except Exception:
            log.exception("tracelake sink: close at exit failed; the spool keeps what was left")
