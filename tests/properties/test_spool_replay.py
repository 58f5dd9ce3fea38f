"""Property: the sink spool's replay delivers each spooled event exactly once, in run order.

Hypothesis draws what crashed sinks left behind: one or more spool folders (owners, oldest
first), each with any sequence of event batches over a few runs (events numbered by the store
and deduplicated by ``event_id``, as the live sink sends them), small segments so that they
rotate, maybe a torn last line (a crash mid-write: never acknowledged, so never stored), and
maybe a replay that crashed after appending some records but before removing their segment.
Replaying twice then stores every acknowledged event exactly once, each run's events in the
order they were spooled, and the second replay finds nothing left.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.properties.strategies import storable_text
from tracelake.sink.spool import Spool, encode
from tracelake.sink.writer import replay
from tracelake.store import NewEvent, Store

RECORDED = datetime(2026, 1, 1, tzinfo=UTC)
TEXT = storable_text(12)

# owners -> batches -> runs (by number) of the batch's events
OWNERS = st.lists(
    st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=5), min_size=1, max_size=6),
    min_size=1,
    max_size=3,
)


def _crash(spool: Spool) -> None:
    """What a SIGKILL leaves: the files as they are, the lock released (the process is gone)."""
    spool.seal()
    assert spool._lock_fd is not None
    os.close(spool._lock_fd)
    spool._lock_fd = None


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    owners=OWNERS,
    texts=st.lists(TEXT, min_size=1, max_size=4),
    segment_bytes=st.sampled_from([300, 1500, 8 << 20]),
    torn=st.sampled_from([None, 1, 9, 20, -2]),  # bytes of a never-finished last record
    pre_replayed=st.integers(0, 4),  # records a crashed replay appended before it died
)
def test_replay_twice_delivers_every_spooled_event_once_in_run_order(
    store: Store,
    owners: list[list[list[int]]],
    texts: list[str],
    segment_bytes: int,
    torn: int | None,
    pre_replayed: int,
) -> None:
    prefix = uuid.uuid4().hex[:12]
    root = Path(tempfile.mkdtemp(prefix="tl-spool-prop-"))
    counter = iter(range(10**6))
    expected: dict[str, list[str]] = {}  # run -> event ids in spool order

    def event(run: int) -> NewEvent:
        n = next(counter)
        run_id = f"{prefix}-r{run}"
        return NewEvent(
            run_id=run_id,
            seq=None,
            type="step.completed",
            source="graph_tool_call",
            payload={"type": "step.completed", "n": n, "note": texts[n % len(texts)]},
            recorded_at=RECORDED,
            event_id=f"ev{n}",
        )

    try:
        for batches in owners:
            spool = Spool(root, max_segment_bytes=segment_bytes)
            spool.open()
            for runs in batches:
                items = [event(run) for run in runs]
                assert spool.append("events", items) is not None
                for e in items:
                    expected.setdefault(e.run_id, []).append(str(e.event_id))
            if torn is not None and spool.current is not None:
                line = encode("events", [event(0)])  # never acknowledged: must not arrive
                with spool.current.open("ab") as f:
                    f.write(line[:torn])
            _crash(spool)

        reader = Spool(root)  # the next sink, or `tracelake spool drain`
        reader.open()
        records = [r for seg in reader.replayable() for r in Spool.read(seg)]
        for record in records[:pre_replayed]:  # a replay that died before removing a segment
            store.append(record.items)  # type: ignore[arg-type]

        first = replay(reader, store)
        second = replay(reader, store)
        reader.close()

        total = sum(len(ids) for ids in expected.values())
        assert first.corrupt == 0 and first.quarantined == 0
        assert first.appended + sum(len(r.items) for r in records[:pre_replayed]) == total
        assert (second.segments, second.appended, second.duplicates) == (0, 0, 0)
        for run in range(3):  # every run, so that a torn record's event would show
            run_id = f"{prefix}-r{run}"
            ids = expected.get(run_id, [])
            rows = store.run_events(run_id)
            assert [r.event_id for r in rows] == ids
            assert [r.seq for r in rows] == list(range(1, len(ids) + 1))
            assert [r.position for r in rows] == sorted(r.position for r in rows)
        assert not list(root.glob("*/seg-*.jsonl")), "replayed segments are removed"
    finally:
        shutil.rmtree(root, ignore_errors=True)
