"""The store contract, written once and run on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from tracelake.errors import AppendOnlyViolationError
from tracelake.store import NewEvent, Store, migrate
from tracelake.store.engine import translate_errors


def ev(run: str, seq: int, etype: str = "step.started", **payload: object) -> NewEvent:
    return NewEvent(
        run_id=run,
        seq=seq,
        type=etype,
        source="graph_tool_call",
        payload={"type": etype, **payload},
        recorded_at=datetime.now(UTC),
        plan_id="plan-1",
        step_id=f"s{seq}",
        tool="searchOrders",
        collection_id="orders",
    )


def test_append_then_read_back_in_order(store: Store) -> None:
    batch = [ev("r1", i, goal="주문 조회 ✓", n=i) for i in range(1, 6)]
    result = store.appender.append(batch)
    assert (result.appended, result.duplicates, result.conflicts) == (5, 0, [])
    rows = store.reader.read_after(0)
    assert [r.seq for r in rows] == [1, 2, 3, 4, 5]
    assert [r.position for r in rows] == sorted(r.position for r in rows)
    assert rows[0].payload == {"type": "step.started", "goal": "주문 조회 ✓", "n": 1}
    assert rows[0].recorded_at.tzinfo is not None
    assert (rows[0].plan_id, rows[0].tool, rows[0].collection_id) == (
        "plan-1",
        "searchOrders",
        "orders",
    )
    assert [r.seq for r in store.reader.run_events("r1")] == [1, 2, 3, 4, 5]
    assert store.reader.max_position() == rows[-1].position


def test_same_batch_twice_appends_nothing(store: Store) -> None:
    batch = [ev("r1", i) for i in range(1, 4)] + [ev("r2", 1)]
    assert store.appender.append(batch).appended == 4
    again = store.appender.append(batch)
    assert (again.appended, again.duplicates) == (0, 4)
    assert store.reader.stats()["events"] == 4


def test_repeat_inside_one_batch_is_a_duplicate(store: Store) -> None:
    result = store.appender.append([ev("r1", 1), ev("r1", 1), ev("r1", 2)])
    assert (result.appended, result.duplicates) == (2, 1)


def test_client_event_id_dedupes_within_its_run(store: Store) -> None:
    first = NewEvent(**{**_fields(ev("r1", 1)), "event_id": "1"})
    retry = NewEvent(**{**_fields(ev("r1", 7)), "event_id": "1"})  # re-sent with another seq
    other_run = NewEvent(**{**_fields(ev("r9", 1)), "event_id": "1"})  # per-stream counters
    assert store.appender.append([first]).appended == 1
    result = store.appender.append([retry, other_run])
    assert (result.appended, result.duplicates) == (1, 1)
    assert [(e.run_id, e.event_id) for e in store.reader.iter_all()] == [("r1", "1"), ("r9", "1")]


def test_different_content_at_a_taken_seq_is_quarantined_not_lost(store: Store) -> None:
    store.appender.append([ev("r1", 1, n=1)])
    result = store.appender.append([ev("r1", 1, n=2), ev("r1", 2)])
    assert result.appended == 1
    assert [c.seq for c in result.conflicts] == [1]
    stats = store.reader.stats()
    assert stats["quarantined_by_reason"] == {"sequence_conflict": 1}
    assert store.reader.run_events("r1")[0].payload["n"] == 1  # never overwritten
    store.appender.append([ev("r1", 1, n=2)])  # the same conflict again is recorded once
    assert store.reader.stats()["quarantined"] == 1


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET type = 'x'",
        "DELETE FROM events",
        "UPDATE events SET payload = payload",
        "REPLACE",  # SQLite's INSERT OR REPLACE deletes without DELETE triggers; PG's upsert
    ],
)
def test_database_refuses_update_and_delete(store: Store, statement: str) -> None:
    store.appender.append([ev("r1", 1), ev("r1", 2)])
    if statement == "REPLACE":
        statement = (
            "INSERT OR REPLACE INTO events SELECT * FROM events"
            if store.dialect == "sqlite"
            else "INSERT INTO events SELECT * FROM events "
            "ON CONFLICT ON CONSTRAINT pk_events DO UPDATE SET type = 'forged'"
        )
    with (
        pytest.raises(AppendOnlyViolationError),
        translate_errors("tamper"),
        store.engine.begin() as conn,
    ):
        conn.exec_driver_sql(statement)
    assert [r.type for r in store.reader.read_after(0)] == ["step.started"] * 2


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"])
def test_postgres_refuses_truncate(store: Store) -> None:
    store.appender.append([ev("r1", 1)])
    with (
        pytest.raises(AppendOnlyViolationError),
        translate_errors("tamper"),
        store.engine.begin() as conn,
    ):
        conn.exec_driver_sql("TRUNCATE events")
    assert store.reader.max_position() > 0


def test_payload_is_stored_as_native_json(store: Store) -> None:
    store.appender.append([ev("r1", 1, goal="한글 목표")])
    with store.engine.connect() as conn:
        if store.dialect == "postgresql":
            kind = conn.exec_driver_sql("SELECT pg_typeof(payload)::text FROM events").scalar()
            assert kind == "jsonb"
            goal = conn.exec_driver_sql("SELECT payload->>'goal' FROM events").scalar()
        else:
            raw = conn.exec_driver_sql("SELECT payload FROM events").scalar()
            assert "한글 목표" in raw and "\\u" not in raw
            goal = conn.exec_driver_sql(
                "SELECT json_extract(payload, '$.goal') FROM events"
            ).scalar()
    assert goal == "한글 목표"


def test_migrations_match_the_schema_module(store: Store) -> None:
    assert migrate.current_revision(store.engine) == migrate.head_revision()
    assert migrate.schema_diff(store.engine) == []


def test_a_held_open_append_blocks_later_appends_so_pollers_never_skip(store: Store) -> None:
    """Invariant 2: hold one writer's transaction open while another tries to commit."""
    store.appender.append([ev("r0", 1)])
    seen = [r.position for r in store.reader.read_after(0)]
    appender = store.appender
    held = store.engine.connect().execution_options(tracelake_write=True)
    tx = held.begin()
    appender.lock(held)
    appender.write(held, [ev("slow", 1)])  # position taken, not committed

    done = threading.Event()

    def later_writer() -> None:
        appender.append([ev("fast", 1)])
        done.set()

    t = threading.Thread(target=later_writer)
    t.start()
    try:
        assert not done.wait(0.5), "a second append committed while the first was still open"
        # The poller sees nothing new: no higher position is visible past the open one.
        assert store.reader.read_after(seen[-1]) == []
        tx.commit()
    finally:
        if tx.is_active:
            tx.rollback()
        held.close()
    t.join(10)
    assert done.is_set()
    polled = store.reader.read_after(seen[-1])
    assert [r.run_id for r in polled] == ["slow", "fast"]
    assert polled[0].position < polled[1].position


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"])
def test_without_the_lock_a_poller_would_skip(store: Store) -> None:
    """The hazard the lock prevents is real: plain inserts commit out of position order."""
    cols = "run_id, seq, type, source, recorded_at, content_hash, payload"
    insert = f"INSERT INTO events ({cols}) VALUES (%s, 1, 't', 'x', now(), 'h', '{{}}')"
    slow = store.engine.raw_connection()
    fast = store.engine.raw_connection()
    try:
        slow.cursor().execute(insert, ("slow",))  # takes the lower position, stays open
        fast.cursor().execute(insert, ("fast",))
        fast.commit()
        first_poll = store.reader.read_after(0)
        assert [r.run_id for r in first_poll] == ["fast"]
        slow.commit()
        second_poll = store.reader.read_after(first_poll[-1].position)
        assert second_poll == []  # "slow" committed below the poller's checkpoint: skipped
        assert {r.run_id for r in store.reader.read_after(0)} == {"slow", "fast"}
    finally:
        slow.close()
        fast.close()


def test_concurrent_writers_and_a_poller_see_every_event_once_in_order(store: Store) -> None:
    writers, batches, size = 4, 8, 25
    stop = threading.Event()
    polled: list[int] = []

    def poll() -> None:
        after = 0
        while True:
            finished = stop.is_set()
            rows = store.reader.read_after(after, 500)
            polled.extend(r.position for r in rows)
            if rows:
                after = rows[-1].position
            elif finished:
                return
            time.sleep(0.001)

    def write(w: int) -> None:
        for b in range(batches):
            store.appender.append([ev(f"w{w}", b * size + i + 1) for i in range(size)])

    poller = threading.Thread(target=poll)
    poller.start()
    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    stop.set()
    poller.join(60)
    everything = [r.position for r in store.reader.iter_all()]
    assert len(everything) == writers * batches * size
    assert polled == everything  # every event, once, in order, none skipped


def _fields(e: NewEvent) -> dict[str, object]:
    return {f: getattr(e, f) for f in e.__slots__}  # type: ignore[attr-defined]


def live(run: str, event_id: str, **payload: object) -> NewEvent:
    return NewEvent(**{**_fields(ev(run, 1, **payload)), "seq": None, "event_id": event_id})


def test_store_numbers_live_events_and_dedupes_their_retries_by_event_id(store: Store) -> None:
    first = [live("run-a", "e1"), live("run-a", "e2"), live("run-b", "e3")]
    assert store.appender.append(first).appended == 3
    retry = store.appender.append(first)  # a retry after an unknown outcome
    assert (retry.appended, retry.duplicates) == (0, 3)
    store.appender.append([live("run-a", "e4", n=4)])  # a later producer continues the run
    assert [(e.seq, e.event_id) for e in store.reader.run_events("run-a")] == [
        (1, "e1"),
        (2, "e2"),
        (3, "e4"),
    ]
    assert [e.seq for e in store.reader.run_events("run-b")] == [1]
    with pytest.raises(ValueError, match="event_id"):
        NewEvent(**{**_fields(ev("r", 1)), "seq": None})
