"""The projection runner: named projections, checkpoints, catch-up and rebuild.

Invariant 4 — a projection writes its rows and its checkpoint in ONE transaction. Each step:

1. open a process step (``Store.process``: one write transaction holding the checkpoint rows of
   the projections being advanced locked), so two
   projectors never apply the same batch;
2. read the next batch after the lowest checkpoint with ``Reader.read_after`` — gap-safe,
   because appends are serialised (see ``tracelake.store.appender``): nothing can later appear below
   a visible position;
3. advance the fold of every run the batch touches by the batch's events (see
   ``projections.fold``) and hand each projection the runs with the items of the new events
   only: per-event rows are inserted once, a run's ``runs`` row is replaced, a learning record
   is inserted at the run's finish;
4. move the checkpoints to the batch's last position; COMMIT.

Linear cost: the engine keeps the folds of the runs it has seen (a bounded cache, tagged with
the checkpoint it is valid at), so an event is read and folded once whatever the batching: a
50,000-event run arriving in 1,000-event pieces costs what 50 short runs cost. A run with no
cached fold (a new process, an evicted run, another projector having moved the checkpoint) is
folded from its stored prefix once. The cache only ever holds what a committed transaction
made true: a failed step drops it.

A crash anywhere before COMMIT rolls back rows and checkpoint together; the batch is applied
again on the next run. Only projections sitting at the same checkpoint share a batch; one that
lags (e.g. being rebuilt) is advanced alone until it has caught up.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.errors import ConfigError
from tracelake.projections.fold import advance, fold
from tracelake.run_identity import TRACELAKE_SOURCE
from tracelake.runners.run_model import RunFold
from tracelake.store import Store
from tracelake.store.records import StoredEvent

DEFAULT_BATCH = 2000
CACHE_RUNS = 100_000  # folds kept between batches (open runs first; finished runs evicted first)
# Finished runs' folds kept (a late event of a run finished long ago is folded from the log
# again): without this cap, a 1M-event rebuild kept ~100,000 folds and the projection job's
# peak RSS grew with the input (145 MiB at 100k events, 583 MiB at 1M).
CACHE_FINISHED = 5_000
MAX_EVICTED = 1_000_000  # run ids remembered as evicted (beyond: every cold run is looked up)
# tracelake's own decision events (promotion: ``suggestion.*``, run id ``suggestion:<id>``) live
# in the same log; they are not runner runs, so only projections that ask for them see them.
DECISIONS_SOURCE = TRACELAKE_SOURCE  # tracelake.run_identity: the one home of the name


class Projection(ABC):
    """A named read model derived per run. Subclasses own ``tables`` and write their rows."""

    name: ClassVar[str]
    tables: ClassVar[tuple[sa.Table, ...]]

    @abstractmethod
    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        """Write what the batch's events add to these runs: each run is folded up to the
        batch's end, and its per-event items (``failures``, ``tool_calls``, ...) are those of
        the batch's events only; ``finished_now`` says the run finished in this batch."""

    def accepts(self, run: RunFold) -> bool:
        """Which runs this projection sees: runner runs, unless it says otherwise."""
        return run.source != DECISIONS_SOURCE

    def reset(self, conn: Connection) -> None:
        for table in reversed(self.tables):
            conn.execute(table.delete())


def delete_runs(conn: Connection, table: sa.Table, run_ids: list[str]) -> None:
    for start in range(0, len(run_ids), 400):
        conn.execute(table.delete().where(table.c.run_id.in_(run_ids[start : start + 400])))


def insert(conn: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    if rows:
        conn.execute(table.insert(), rows)


@dataclass
class CatchUp:
    """What one catch-up did: events read, and each projection's checkpoint after it."""

    events: int = 0
    batches: int = 0
    positions: dict[str, int] = field(default_factory=dict)


class ProjectionEngine:
    def __init__(
        self,
        store: Store,
        projections: Iterable[Projection] | None = None,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        from tracelake.projections import default_projections

        self.store = store
        self.projections = list(projections) if projections is not None else default_projections()
        self.batch_size = batch_size
        self.cache_runs = CACHE_RUNS
        self.cache_finished = CACHE_FINISHED
        self._folds: OrderedDict[str, RunFold] = OrderedDict()
        self._finished: OrderedDict[str, None] = OrderedDict()  # cached finished runs, oldest first
        self._evicted: set[str] = set()  # finished runs evicted while the cache was complete
        self._folds_at = -1  # the position every cached fold is folded up to
        self._complete = False  # the cache holds every run with an event <= _folds_at

    # -- selection -----------------------------------------------------------------------
    def select(self, names: Sequence[str] | None) -> list[Projection]:
        if not names:
            return list(self.projections)
        known = {p.name: p for p in self.projections}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(
                f"no projection named {', '.join(map(repr, unknown))}; "
                f"known projections: {', '.join(known)}"
            )
        return [known[n] for n in names]

    # -- public operations -----------------------------------------------------------------
    def checkpoints(self) -> dict[str, int]:
        rows = self.store.checkpoints()
        return {p.name: rows.get(p.name, 0) for p in self.projections}

    def catch_up(
        self, names: Sequence[str] | None = None, max_batches: int | None = None
    ) -> CatchUp:
        chosen = self.select(names)
        result = CatchUp()
        while max_batches is None or result.batches < max_batches:
            read = self.step(chosen)
            if read == 0:
                break
            result.events += read
            result.batches += 1
        result.positions = {n: p for n, p in self.checkpoints().items() if n in _names(chosen)}
        return result

    def reset(self, names: Sequence[str] | None = None) -> None:
        """Delete the projections' rows and set their checkpoints to zero, in one transaction."""
        chosen = self.select(names)
        self._drop_cache()
        with self.store.process(_names(chosen), "reset projections") as step:
            for p in chosen:
                p.reset(step.conn)
                step.advance(p.name, 0)

    def rebuild(self, names: Sequence[str] | None = None) -> CatchUp:
        self.reset(names)
        return self.catch_up(names)

    # -- one batch -------------------------------------------------------------------------
    def step(self, chosen: Sequence[Projection]) -> int:
        """Advance the projections at the lowest checkpoint by one batch; events read."""
        try:
            with self.store.process(_names(chosen), "apply projections") as step:
                positions = dict(step.positions)
                low = min(positions.values())
                active = [p for p in chosen if positions[p.name] == low]
                batch = self.store.read_after(low, self.batch_size)
                if not batch:
                    return 0
                high = batch[-1].position
                runs = self._fold(batch, low)
                for p in active:
                    p.apply(step.conn, [r for r in runs if p.accepts(r)])
                    step.advance(p.name, high)
        except BaseException:
            self._drop_cache()  # folds advanced past what was committed
            raise
        self._keep(runs, high)
        return len(batch)

    # -- folds -----------------------------------------------------------------------------
    def _fold(self, batch: list[StoredEvent], low: int) -> list[RunFold]:
        """Each touched run's fold advanced by its batch events; items = the batch's only."""
        if self._folds_at != low:
            self._drop_cache()
            self._complete = low == 0
        by_run: dict[str, list[StoredEvent]] = defaultdict(list)
        for e in batch:
            by_run[e.run_id].append(e)
        folds: dict[str, RunFold] = {}
        cold = [rid for rid in by_run if rid not in self._folds]
        if self._complete:  # only an evicted finished run has events before this batch
            cold = [rid for rid in cold if rid in self._evicted]
        if cold:
            prefix: dict[str, list[StoredEvent]] = defaultdict(list)
            for e in self.store.read_runs_until(cold, low):
                prefix[e.run_id].append(e)
            for rid, events in prefix.items():
                folds[rid] = fold(events)
                folds[rid].emitted()  # rows of these events were written by earlier batches
        out = []
        for rid, events in by_run.items():
            run = self._folds.get(rid) or folds.get(rid)
            if run is None:
                run = fold(events)
            else:
                run.emitted()
                advance(run, events)
            out.append(run)
        return out

    def _keep(self, runs: list[RunFold], high: int) -> None:
        for run in runs:
            run.emitted()
            if run.source != DECISIONS_SOURCE and isinstance(run.last_event, StoredEvent):
                # only the suggestions projection reads a last event's payload
                run.last_event = replace(run.last_event, payload={}, redactions=None)
            self._folds[run.run_id] = run
            self._folds.move_to_end(run.run_id)
            self._evicted.discard(run.run_id)
            if run.finished:
                self._finished[run.run_id] = None
                self._finished.move_to_end(run.run_id)
            else:
                self._finished.pop(run.run_id, None)
        self._folds_at = high
        while len(self._finished) > self.cache_finished:
            rid = self._finished.popitem(last=False)[0]
            del self._folds[rid]
            self._evicted.add(rid)  # the cache stays complete but for these (see _fold)
        if len(self._evicted) > MAX_EVICTED:
            self._complete = False
            self._evicted.clear()
        excess = len(self._folds) - self.cache_runs
        if excess > 0:
            self._complete = False
            self._evicted.clear()
            for rid in list(self._finished)[:excess]:
                del self._folds[rid]
                del self._finished[rid]
            while len(self._folds) > self.cache_runs:
                rid, _ = self._folds.popitem(last=False)
                self._finished.pop(rid, None)

    def _drop_cache(self) -> None:
        self._folds.clear()
        self._finished.clear()
        self._evicted.clear()
        self._folds_at, self._complete = -1, False


def _names(chosen: Sequence[Projection]) -> list[str]:
    return [p.name for p in chosen]
