"""The sink's database thread: append what the spool writer hands over, replay the spool.

Appends happen only here (the writer's only database calls are subject-secret lookups, bounded
to a second), so a hung database never delays the spool and a replay never stalls recording.
Every call is bounded: timeouts, TCP keepalives, and a watchdog (:meth:`Shipper.check_overrun`,
run by the writer thread) that takes an overrun for an outage and shuts the socket down."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tracelake.errors import SchemaNotReadyError
from tracelake.sink.handoff import Batch, Handoff
from tracelake.sink.spool import Spool, SpoolCorruptError
from tracelake.store import NewEvent, QuarantineItem, Store

if TYPE_CHECKING:
    from tracelake.sink.writer import Counters

log = logging.getLogger("tracelake.sink")

HEALTHY, DEGRADED, CLOSED = "healthy", "degraded", "closed"


class Shipper:
    def __init__(
        self,
        store: Store,
        spool: Spool,
        handoff: Handoff,
        counters: Counters,
        *,
        timeout: float,
        retry_max: float,
        safe_error: Callable[[BaseException], str],
        where: str,
        busy: Callable[[], bool] = lambda: False,
        runner_paused: threading.Event | None = None,
    ) -> None:
        self.store, self.spool, self.handoff, self.counters = store, spool, handoff, counters
        self.timeout, self.retry_max = timeout, retry_max
        self.safe_error, self.where, self.busy = safe_error, where, busy
        self.runner_paused = runner_paused or threading.Event()
        self.state = HEALTHY
        self.stopping = False
        self.halt = False
        self.idle = threading.Event()
        self.held: deque[Batch] = deque()  # memory-only batches the database refused
        self.call_started: float | None = None
        self._flagged: float | None = None
        self._retry_at = 0.0
        self._backoff = 0.25
        self._replay_events = 0
        self._replay_since: float | None = None
        self._schema_missing_said = False
        self.schema_checked = threading.Event()  # the writer waits for it on SQLite
        self._counted: set[str] = set()  # quarantine rows counted in stats() already

    # -- the loop ----------------------------------------------------------------------
    def run(self) -> None:
        self._check_schema()  # (never raises)
        self.schema_checked.set()
        self._replay_abandoned()
        while not self.halt:
            if self.stopping and self._out_of_work():
                break
            h = self.handoff
            if self.state == DEGRADED or self.held or (not h.accepting and not h.ready):
                # an outage, or a backlog in the spool (live hand-over resumes after it)
                if time.monotonic() < self._retry_at:
                    if self.stopping:
                        break  # the spool keeps it; the next sink replays it
                    self._wait(min(0.05, self._retry_at - time.monotonic()))
                    continue
                self._recover()
                continue
            if self.busy() and not self.stopping and h.ready_events < h.max_events // 2:
                # The runner is producing (events wait to be spooled): what is ready is already
                # durable, so give the CPU to the run and the spool writer, and append when the
                # runner pauses (or half the hand-over fills).
                self.runner_paused.wait(0.1)  # set by the writer when the queue is empty
                continue
            self.idle.clear()  # before pop(): flush() must not see "nothing ready, idle"
            batch = self.handoff.pop()  # while this batch is being appended
            if batch is None:
                self.idle.set()
                self._wait(0.05)
                continue
            try:
                self._append(batch.events, batch.bad, live=True)
            except Exception as exc:  # noqa: BLE001 - any failure is an outage
                self._fail(exc, batch)
                continue
            self._ack(batch)
        self.idle.set()

    def _out_of_work(self) -> bool:
        h = self.handoff
        return not h.ready and not self.held and (h.accepting or self.state == DEGRADED)

    def _wait(self, seconds: float) -> None:
        self.handoff.wake.wait(max(0.0, seconds))
        self.handoff.wake.clear()

    # -- bounded database calls ----------------------------------------------------------
    @contextlib.contextmanager
    def _watched(self) -> Iterator[None]:
        self.call_started = time.monotonic()
        try:
            yield
        finally:
            self.call_started = None
        if self.halt:
            raise RuntimeError("the sink was closed during this database call")

    def check_overrun(self) -> None:
        """Called by the writer thread: a database call that overran is an outage."""
        started = self.call_started
        if started is None or started == self._flagged:
            return
        if time.monotonic() - started > self.timeout:
            self._flagged = started
            with self.handoff.lock:
                self.handoff.accepting = False  # live events go to the spool only
            self._say_degraded(f"a database call did not return within {self.timeout:g}s")
            self.interrupt()

    def interrupt(self) -> None:
        """End whatever call this engine's connections are blocked in (from another thread)."""
        self.store.interrupt()

    def _append(
        self, events: Sequence[NewEvent], bad: Sequence[QuarantineItem], *, live: bool
    ) -> None:
        with self._watched():
            if events:
                result = self.store.append(events)
                self.counters.quarantined += len(result.conflicts) + result.rejected
                self.counters.duplicates += result.duplicates
                if live:
                    self.counters.written += result.appended + result.duplicates
                else:
                    self.counters.written += result.appended
                    self.counters.replayed += result.appended
            if bad:
                self.store.add_to_quarantine(bad)
                self._count_quarantined(bad)

    def _count_quarantined(self, bad: Sequence[QuarantineItem]) -> None:
        """Count each row once: after an outage the spool replays batches that were appended
        live already (the insert ignores them; its rowcount is not reliable for a batch)."""
        seen = self._counted
        if len(seen) > 200_000:
            seen.clear()
        for item in bad:
            if item.dedupe_key not in seen:
                seen.add(item.dedupe_key)
                self.counters.quarantined += 1

    # -- acknowledging -----------------------------------------------------------------
    def _ack(self, batch: Batch) -> None:
        if batch.segment is None:
            return
        h = self.handoff
        with h.lock:
            h.acked[batch.segment] = h.acked.get(batch.segment, 0) + batch.records
            self._drop_acked_segments()

    def _drop_acked_segments(self) -> None:
        """Delete own sealed segments whose every record was appended (caller holds lock)."""
        h = self.handoff
        current = self.spool.current
        done = [
            s
            for s, n in h.written.items()
            if s != current and s not in h.dirty and h.acked.get(s, 0) >= n
        ]
        for seg in done:
            with contextlib.suppress(OSError):
                self.spool.remove(seg)
            h.written.pop(seg, None)
            h.acked.pop(seg, None)

    # -- outage and recovery -----------------------------------------------------------
    def _fail(self, exc: BaseException, batch: Batch | None) -> None:
        h = self.handoff
        with h.lock:
            items = ([batch] if batch is not None else []) + list(h.ready)
            h.ready.clear()
            h.ready_events = h.memory_events = 0
            h.accepting = False
            for b in items:
                if b.segment is None:
                    self.held.append(b)
                else:
                    h.mark_backlog(b)
                    self.counters.spooled += len(b.events)
            # Every own segment is now replayed from disk (appending twice is harmless).
            h.written.clear()
            h.acked.clear()
        self._retry_at = time.monotonic() + self._backoff
        self._backoff = min(self._backoff * 2, self.retry_max)
        if isinstance(exc, SchemaNotReadyError) or _no_schema(exc):
            self._say_schema_missing()  # that line says it all
            self.state = DEGRADED
            return
        self._say_degraded(f"the database refused a write ({self.safe_error(exc)})")

    def _say_degraded(self, why: str) -> None:
        if self.state != DEGRADED:
            self.state = DEGRADED
            log.warning(
                "tracelake sink degraded: %s; events go to the spool at %s and are replayed "
                "when the database answers again",
                why,
                self.spool.root,
            )

    def _say_schema_missing(self) -> None:
        if not self._schema_missing_said:
            self._schema_missing_said = True
            log.error(
                "tracelake sink: the database %s has no tracelake schema; events are kept in "
                "the spool at %s until you run `tracelake db upgrade` (the sink then catches "
                "up by itself)",
                self.where,
                self.spool.root,
            )

    def _check_schema(self) -> None:
        """Say clearly when the schema is missing; an embedded SQLite database is migrated.
        (One cheap query: alembic is imported only when there is something to migrate.)"""
        try:
            with self._watched(), self.store.reading("check the schema") as conn:
                conn.exec_driver_sql("SELECT 1 FROM events WHERE 1 = 0").all()
            return
        except Exception as exc:  # noqa: BLE001 - unreachable: the first append says so
            if not _no_schema(exc):
                log.debug("schema check failed: %s", self.safe_error(exc))
                return
        if not self.store.embedded:
            self._say_schema_missing()
            return
        try:
            log.info("tracelake sink: creating the schema in %s", self.where)
            with self._watched():
                self.store.upgrade()
        except Exception as exc:  # noqa: BLE001 - the first append will say what is wrong
            log.error("tracelake sink: could not create the schema (%s)", self.safe_error(exc))

    def _recover(self) -> None:
        """Held memory batches first, then the spool's backlog; then live hand-over again.
        After an outage the database must answer first (an empty backlog proves nothing)."""
        try:
            if self.state == DEGRADED and not self.held:
                with self._watched(), self.store.reading("check the database answers") as c:
                    c.exec_driver_sql("SELECT 1").all()
        except Exception as exc:  # noqa: BLE001 - still down: stay degraded, try later
            return self._fail(exc, None)
        while self.held and not self.halt:
            batch = self.held[0]
            try:
                self._append(batch.events, batch.bad, live=True)
            except Exception as exc:  # noqa: BLE001
                self._spool_held()
                self._fail(exc, None)
                return
            self.held.popleft()
        if self.held or not self._catch_up():
            return
        self._backoff = 0.25
        if self.state == DEGRADED:
            self.state = HEALTHY
            self._flagged = None
            log.warning("tracelake sink recovered: the spool was replayed into the database")

    def _spool_held(self) -> None:
        """The database still refuses: put memory-only batches in the spool if the disk is
        back (they are then replayed like any backlog)."""
        h = self.handoff
        while self.held:
            batch = self.held[0]
            try:
                with h.lock:
                    seg = self.spool.append("events", batch.events)
                    self.spool.append("quarantine", batch.bad)
                    h.accepting = False
                    if seg is not None:
                        h.mark_backlog(batch)
                        h.dirty.add(seg)
            except Exception:  # noqa: BLE001 - still full: keep it in memory
                return
            self.counters.spooled += len(batch.events)
            self.held.popleft()

    def _catch_up(self) -> bool:
        h = self.handoff
        with h.lock:
            self.spool.seal()  # the writer opens a new segment for what comes next
            self._drop_acked_segments()
            h.written.clear()
            h.acked.clear()
            h.dirty.clear()  # every sealed segment is replayed now
            h.accepting = True  # new batches queue behind the backlog replayed now
            self._replay_events += h.backlog_events
            h.backlog_events = 0
            if h.backlog_since is not None:
                since = self._replay_since
                self._replay_since = (
                    h.backlog_since if since is None else min(since, h.backlog_since)
                )
            h.backlog_since = None
            segments = self.spool.replayable()
        try:
            for segment in segments:
                if not self._replay_segment(segment):
                    return False
        except Exception as exc:  # noqa: BLE001 - down again: stay degraded, try later
            with h.lock:
                h.backlog_events += self._replay_events
                self._replay_events = 0
                if self._replay_since is not None:
                    h.backlog_since = self._replay_since
                self._replay_since = None
            self._fail(exc, None)
            return False
        self._replay_events = 0
        self._replay_since = None
        return True

    def _replay_abandoned(self) -> None:
        """Spools left by sinks that are gone (crashed, killed), before any live batch."""
        with self.handoff.lock:
            segments = [s for s in self.spool.replayable() if s.parent != self.spool.owner]
        try:
            for segment in segments:
                if not self._replay_segment(segment):
                    return
        except Exception as exc:  # noqa: BLE001 - down: the catch-up replays them later
            self._fail(exc, None)

    def _replay_segment(self, segment: Any) -> bool:
        try:
            for record in Spool.read_merged(segment):
                if self.halt:
                    return False
                if record.kind == "events":
                    events: list[NewEvent] = record.items  # type: ignore[assignment]
                    self._append(events, [], live=False)
                    self._replay_events = max(0, self._replay_events - len(events))
                else:
                    self._append([], record.items, live=False)  # type: ignore[arg-type]
        except SpoolCorruptError:
            kept = self.spool.quarantine_segment(segment)
            log.error(
                "tracelake spool: %s is damaged after its readable records; those were "
                "replayed, the file is kept as %s for inspection",
                segment.name,
                kept,
            )
            return True
        with self.handoff.lock:
            self.spool.remove(segment)
        return True

    # -- lag ---------------------------------------------------------------------------
    def lag(self) -> tuple[int, float | None]:
        """(events in the spool waiting for the database, when the oldest was recorded)."""
        h = self.handoff
        oldest = [t for t in (h.oldest(), self._replay_since) if t is not None]
        oldest += [b.oldest for b in list(self.held)[:1]]
        return h.backlog_events + self._replay_events, min(oldest, default=None)

    def finish(self) -> None:
        """At close: delete own segments whose records are all in the database."""
        with self.handoff.lock:
            self.spool.seal()
            self._drop_acked_segments()


def _no_schema(exc: BaseException) -> bool:
    text = str(exc)
    return "no such table" in text or ("relation" in text and "does not exist" in text)
