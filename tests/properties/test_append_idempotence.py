"""Property: appending is idempotent, on SQLite and PostgreSQL.

Hypothesis draws a set of events (some keyed by ``(run_id, seq)``, some numbered by the store
and deduplicated by ``event_id``, as the live sink sends them) and any sequence of batches over
them: batches that repeat, overlap, interleave, or repeat an event inside one batch. Whatever
the sequence, every event is stored exactly once, in the order it was first sent, and the
append results add up. Each example uses run ids of its own, so the examples share one
database (a fresh one per backend) without seeing each other.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.properties.strategies import storable_text
from tracelake.store import NewEvent, Store, StoredEvent

RECORDED = datetime(2026, 1, 1, tzinfo=UTC)
# No NUL and no lone surrogates: the pipeline removes both before the store (codec.loads_line,
# runners.normalize). A NUL given to the store directly is quarantined on PostgreSQL as a value
# the database refuses (tests/store/test_store_contract.py), which this property does not model.
TEXT = storable_text(20)
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), TEXT)


@st.composite
def event_pool(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Distinct events: a key (or event id), a run (by number) and a payload of their own."""
    keyed = draw(
        st.lists(st.tuples(st.integers(0, 2), st.integers(1, 12)), unique=True, max_size=10)
    )
    by_id = draw(
        st.lists(st.tuples(st.integers(3, 4), st.integers(1, 30)), unique=True, max_size=6)
    )
    pool: list[dict[str, Any]] = [{"run": run, "seq": seq, "event_id": None} for run, seq in keyed]
    pool += [{"run": run, "seq": None, "event_id": f"e{n}"} for run, n in by_id]
    for spec in pool:
        spec["extra"] = draw(st.dictionaries(TEXT, JSON_LEAF, max_size=3))
    return draw(st.permutations(pool)) if pool else pool


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[list[int]]]:
    pool = draw(event_pool())
    if not pool:
        return pool, []
    index = st.integers(0, len(pool) - 1)
    sent = draw(st.lists(st.lists(index, max_size=8), min_size=1, max_size=6))
    if draw(st.booleans()):  # and the whole sequence once more
        sent = sent + sent
    return pool, sent


def _event(spec: dict[str, Any], prefix: str) -> NewEvent:
    run = f"{prefix}-r{spec['run']}"
    seq = spec["seq"]
    return NewEvent(
        run_id=run,
        seq=seq,
        type="step.completed",
        source="graph_tool_call",
        payload={"type": "step.completed", "who": spec["event_id"] or seq, "extra": spec["extra"]},
        recorded_at=RECORDED,
        event_id=spec["event_id"],
    )


def _stored(store: Store, runs: set[str]) -> list[StoredEvent]:
    rows = [row for run in sorted(runs) for row in store.run_events(run)]
    return sorted(rows, key=lambda row: row.position)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=batches())
def test_any_batches_store_each_event_once_in_first_sent_order(
    store: Store, drawn: tuple[list[dict[str, Any]], list[list[int]]]
) -> None:
    pool, sent = drawn
    prefix = uuid.uuid4().hex[:12]
    events = [_event(spec, prefix) for spec in pool]
    appended = duplicates = 0
    for batch in sent:
        result = store.append([events[i] for i in batch])
        assert result.conflicts == [] and result.rejected == 0
        appended += result.appended
        duplicates += result.duplicates

    first_sent = list(dict.fromkeys(i for batch in sent for i in batch))
    assert appended == len(first_sent)
    assert duplicates == sum(len(batch) for batch in sent) - len(first_sent)

    rows = _stored(store, {e.run_id for e in events})
    assert [(r.run_id, r.payload) for r in rows] == [
        (events[i].run_id, events[i].payload) for i in first_sent
    ]
    assert [r.event_id for r in rows] == [events[i].event_id for i in first_sent]
    for i, row in zip(first_sent, rows, strict=True):
        if events[i].seq is not None:
            assert row.seq == events[i].seq
    # store-numbered runs count 1, 2, 3, ... in the order their events were first sent
    numbered: dict[str, list[int]] = {}
    for row in rows:
        if row.event_id is not None:
            numbered.setdefault(row.run_id, []).append(row.seq)
    for seqs in numbered.values():
        assert seqs == list(range(1, len(seqs) + 1))
