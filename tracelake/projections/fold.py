"""One run's stored events folded into what every projection needs: pure functions.

``fold(events)`` folds a run from its first event; ``advance(run, more)`` continues a fold with
the run's next events, so the projection runner folds each event once, whatever the batching
(it keeps the folds of open runs between batches and re-reads a run's stored prefix only when
it has no fold for it, e.g. in a new process). Each event is handed to its runner adapter's
handler for its type (``tracelake.runners``); what a run is lives in ``runners.run_model``.

Every derived value depends only on the events up to the one that produced it: a per-event row
(a failure, a tool call, a binding repair, a coercion, a data flow) is fixed when its event is
folded, and the learning record is frozen at the event that finished the run. So rows never
depend on how the log was cut into batches (rebuild == incremental). Only the scrubbed, stored
payloads are read.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracelake.runners.registry import STATUS_GROUPS, fold_event
from tracelake.runners.run_model import FAILED, SUCCESS, Event, RunFold


def fold(events: Sequence[Event]) -> RunFold:
    """Fold one run's events (in position order, at least one) into a :class:`RunFold`."""
    first = events[0]
    run = RunFold(first.run_id, first.source, first.recorded_at, first)
    advance(run, events)
    return run


def advance(run: RunFold, events: Sequence[Event]) -> RunFold:
    """Fold more of the run's events (in position order, after those already folded).

    Every derived value depends only on the events up to the one that produced it, never on
    how the log was cut into batches: rebuild == incremental."""
    for e in events:
        run.last_event = e
        run.event_count += 1
        if run.collection_id is None and e.collection_id:
            run.collection_id = e.collection_id
        fold_event(run, e)
        if not run.finished and e.type in STATUS_GROUPS:
            run.status = STATUS_GROUPS[e.type]
        if run.finished:
            run.status = SUCCESS if run.success else FAILED
            if run.finish_position is None:
                _finish(run, e)
    return run


def _finish(run: RunFold, e: Event) -> None:
    """The event that finished the run: freeze what is fixed at the finish."""
    from tracelake.projections.learning_records import record_of

    run.finish_position, run.finished_now = e.position, True
    run.runner_state = None  # e.g. data flows are observed up to the run's end
    run.emit_waiting_bindings()  # their step never started
    run.record = record_of(run)
