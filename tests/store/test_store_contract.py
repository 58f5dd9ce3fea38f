"""The store contract, written once (:class:`StoreContract`) and run on every backend.

A backend's test class subclasses :class:`StoreContract` and provides three fixtures: ``store``
(a fresh, migrated, empty store), ``unmigrated_url`` (a reachable database without the schema)
and ``refused_url`` (a database that cannot be opened). ``TestSqliteStore`` and
``TestPostgresStore`` below are the two backends; a third adds one class.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from tests.conftest import PgServer
from tracelake.errors import (
    AppendOnlyViolationError,
    SchemaNotReadyError,
    StoreAccessError,
    StoreError,
    StoreUnavailableError,
)
from tracelake.store import NewEvent, QuarantineItem, Store, migrate, open_store
from tracelake.store.connection import create_engine
from tracelake.store.schema import runs


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


def _fields(e: NewEvent) -> dict[str, Any]:
    return {f: getattr(e, f) for f in e.__slots__}


def live(run: str, event_id: str, **payload: Any) -> NewEvent:
    return NewEvent(**{**_fields(ev(run, 1, **payload)), "seq": None, "event_id": event_id})


def _run_row(run_id: str) -> dict[str, object]:
    now = datetime.now(UTC)
    counts = ("event_count", "step_count", "retry_count", "skip_count", "repair_count")
    more = ("coercion_count", "binding_repair_count", "last_position")
    return {
        "run_id": run_id,
        "source": "graph_tool_call",
        "status": "running",
        "finished": False,
        "plan_ids": [],
        "started_at": now,
        "last_event_type": "step.started",
        **dict.fromkeys(counts + more, 0),
    }


def _item(key: str) -> QuarantineItem:
    return QuarantineItem(
        origin="ingest",
        reason="invalid_json",
        detail="line 3 is not JSON",
        recorded_at=datetime.now(UTC),
        dedupe_key=key,
        line_no=3,
    )


def _project(store: Store, name: str, upto: int, rows: list[dict[str, object]]) -> None:
    with store.process([name], "test projection") as step:
        step.conn.execute(runs.insert(), rows)
        step.advance(name, upto)


class StoreContract:
    """What every backend's :class:`Store` does. Subclasses provide the fixtures."""

    @pytest.fixture
    def store(self) -> Iterator[Store]:
        raise NotImplementedError("a backend's test class provides a fresh, migrated store")

    @pytest.fixture
    def unmigrated_url(self) -> str:
        raise NotImplementedError("a backend's test class provides a database with no schema")

    @pytest.fixture
    def refused_url(self) -> str:
        raise NotImplementedError("a backend's test class provides a database that is refused")

    # -- aggregate recorder: append ------------------------------------------------------------
    def test_append_then_read_back_in_order(self, store: Store) -> None:
        batch = [ev("r1", i, goal="주문 조회 ✓", n=i) for i in range(1, 6)]
        result = store.append(batch)
        assert (result.appended, result.duplicates, result.conflicts) == (5, 0, [])
        rows = store.read_after(0)
        assert [r.seq for r in rows] == [1, 2, 3, 4, 5]
        assert [r.position for r in rows] == sorted(r.position for r in rows)
        assert rows[0].payload == {"type": "step.started", "goal": "주문 조회 ✓", "n": 1}
        assert rows[0].recorded_at.tzinfo is not None
        assert (rows[0].plan_id, rows[0].tool, rows[0].collection_id) == (
            "plan-1",
            "searchOrders",
            "orders",
        )
        assert [r.seq for r in store.run_events("r1")] == [1, 2, 3, 4, 5]
        assert store.max_position() == rows[-1].position

    def test_same_batch_twice_appends_nothing(self, store: Store) -> None:
        batch = [ev("r1", i) for i in range(1, 4)] + [ev("r2", 1)]
        assert store.append(batch).appended == 4
        again = store.append(batch)
        assert (again.appended, again.duplicates) == (0, 4)
        assert store.stats()["events"] == 4
        # stored runs and a new one in one batch: keys are looked up in the stored runs only
        mixed = store.append([ev("r3", 1), ev("r2", 1), ev("r1", 4), ev("r1", 2, n=9)])
        assert (mixed.appended, mixed.duplicates) == (2, 1)
        assert [(c.run_id, c.seq) for c in mixed.conflicts] == [("r1", 2)]

    def test_repeat_inside_one_batch_is_a_duplicate(self, store: Store) -> None:
        result = store.append([ev("r1", 1), ev("r1", 1), ev("r1", 2)])
        assert (result.appended, result.duplicates) == (2, 1)

    def test_client_event_id_dedupes_within_its_run(self, store: Store) -> None:
        first = NewEvent(**{**_fields(ev("r1", 1)), "event_id": "1"})
        retry = NewEvent(**{**_fields(ev("r1", 7)), "event_id": "1"})  # re-sent, another seq
        other_run = NewEvent(**{**_fields(ev("r9", 1)), "event_id": "1"})  # per-stream ids
        assert store.append([first]).appended == 1
        result = store.append([retry, other_run])
        assert (result.appended, result.duplicates) == (1, 1)
        assert [(e.run_id, e.event_id) for e in store.iter_all()] == [
            ("r1", "1"),
            ("r9", "1"),
        ]

    def test_store_numbers_live_events_and_dedupes_their_retries(self, store: Store) -> None:
        first = [live("run-a", "e1"), live("run-a", "e2"), live("run-b", "e3")]
        assert store.append(first).appended == 3
        retry = store.append(first)  # a retry after an unknown outcome
        assert (retry.appended, retry.duplicates) == (0, 3)
        store.append([live("run-a", "e4", n=4)])  # a later producer continues the run
        assert [(e.seq, e.event_id) for e in store.run_events("run-a")] == [
            (1, "e1"),
            (2, "e2"),
            (3, "e4"),
        ]
        assert [e.seq for e in store.run_events("run-b")] == [1]
        with pytest.raises(ValueError, match="event_id"):
            NewEvent(**{**_fields(ev("r", 1)), "seq": None})

    @pytest.mark.parametrize(
        "statement", ["UPDATE events SET type = 'x'", "DELETE FROM events", "REPLACE"]
    )
    def test_database_refuses_update_and_delete(self, store: Store, statement: str) -> None:
        store.append([ev("r1", 1), ev("r1", 2)])
        if statement == "REPLACE":
            statement = self.replace_statement()
        with pytest.raises(AppendOnlyViolationError), store.writing("tamper") as conn:
            conn.exec_driver_sql(statement)
        assert [r.type for r in store.read_after(0)] == ["step.started"] * 2

    def replace_statement(self) -> str:
        """The backend's upsert that would overwrite a stored event (must be refused)."""
        raise NotImplementedError

    # -- application recorder: read after a position -------------------------------------------
    def test_read_after_pages_through_the_log_in_position_order(self, store: Store) -> None:
        store.append([ev(f"r{i % 3}", i) for i in range(1, 12)])
        seen, after = [], 0
        while page := store.read_after(after, limit=4):
            assert len(page) <= 4
            seen.extend(page)
            after = page[-1].position
        assert [e.position for e in seen] == sorted({e.position for e in seen})
        assert [(e.run_id, e.seq) for e in seen] == [(f"r{i % 3}", i) for i in range(1, 12)]
        assert store.read_after(store.max_position()) == []

    def test_a_held_open_append_blocks_later_appends_so_pollers_never_skip(
        self, store: Store
    ) -> None:
        """Invariant 2: hold one writer's transaction open while another tries to commit."""
        store.append([ev("r0", 1)])
        seen = [r.position for r in store.read_after(0)]
        appender = store.parts_for_tests().appender  # the append's steps, one by one
        done = threading.Event()

        def later_writer() -> None:
            store.append([ev("fast", 1)])
            done.set()

        t = threading.Thread(target=later_writer)
        with contextlib.ExitStack() as held:
            conn = held.enter_context(store.writing("hold the append lock"))
            store.lock_appends(conn)
            appender.write(conn, [ev("slow", 1)])  # position taken, not committed
            t.start()
            assert not done.wait(0.5), "a second append committed while the first was open"
            # The poller sees nothing new: no higher position is visible past the open one.
            assert store.read_after(seen[-1]) == []
        t.join(10)
        assert done.is_set()
        polled = store.read_after(seen[-1])
        assert [r.run_id for r in polled] == ["slow", "fast"]
        assert polled[0].position < polled[1].position

    def test_concurrent_writers_and_a_poller_see_every_event_once_in_order(
        self, store: Store
    ) -> None:
        writers, batches, size = 4, 8, 25
        stop = threading.Event()
        polled: list[int] = []

        def poll() -> None:
            after = 0
            while True:
                finished = stop.is_set()
                rows = store.read_after(after, 500)
                polled.extend(r.position for r in rows)
                if rows:
                    after = rows[-1].position
                elif finished:
                    return
                time.sleep(0.001)

        def write(w: int) -> None:
            for b in range(batches):
                store.append([ev(f"w{w}", b * size + i + 1) for i in range(size)])

        poller = threading.Thread(target=poll)
        poller.start()
        threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        stop.set()
        poller.join(60)
        everything = [r.position for r in store.iter_all()]
        assert len(everything) == writers * batches * size
        assert polled == everything  # every event, once, in order, none skipped

    # -- process recorder: checkpoint and derived rows in one transaction ----------------------
    def test_process_commits_rows_and_checkpoint_together(self, store: Store) -> None:
        assert "p" not in store.checkpoints()
        _project(store, "p", 7, [_run_row("r1")])
        assert store.checkpoints()["p"] == 7
        with store.reading() as conn:
            assert conn.execute(sa.select(runs.c.run_id)).scalars().all() == ["r1"]
        with store.process(["p", "q"]) as step:
            assert step.positions == {"p": 7, "q": 0}

    def test_a_failure_in_the_rows_leaves_the_checkpoint_unchanged(self, store: Store) -> None:
        _project(store, "p", 3, [_run_row("r1")])
        bad = {**_run_row("r2"), "source": None}  # NOT NULL: the database refuses the row
        with pytest.raises(StoreError) as caught:
            _project(store, "p", 9, [_run_row("r3"), bad])
        assert not isinstance(caught.value, DBAPIError)
        assert store.checkpoints()["p"] == 3
        with store.reading() as conn:
            assert conn.execute(sa.select(runs.c.run_id)).scalars().all() == ["r1"]

    def test_an_exception_in_the_step_rolls_back_both(self, store: Store) -> None:
        with pytest.raises(RuntimeError), store.process(["p"]) as step:
            step.conn.execute(runs.insert(), [_run_row("r1")])
            step.advance("p", 5)
            raise RuntimeError("the projector crashed")
        assert store.checkpoints().get("p", 0) == 0
        with store.reading() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(runs)).scalar() == 0

    def test_only_locked_checkpoints_advance(self, store: Store) -> None:
        with pytest.raises(KeyError), store.process(["p"]) as step:
            step.advance("other", 1)

    # -- quarantine ----------------------------------------------------------------------------
    def test_quarantine_records_each_item_once(self, store: Store) -> None:
        assert store.add_to_quarantine([_item("a"), _item("b"), _item("a")]) == 2
        assert store.add_to_quarantine([_item("a")]) == 0
        assert store.add_to_quarantine([]) == 0
        stats = store.stats()
        assert (stats["quarantined"], stats["quarantined_by_reason"]) == (2, {"invalid_json": 2})

    def test_different_content_at_a_taken_seq_is_quarantined_not_lost(self, store: Store) -> None:
        store.append([ev("r1", 1, n=1)])
        result = store.append([ev("r1", 1, n=2), ev("r1", 2)])
        assert result.appended == 1
        assert [c.seq for c in result.conflicts] == [1]
        stats = store.stats()
        assert stats["quarantined_by_reason"] == {"sequence_conflict": 1}
        assert store.run_events("r1")[0].payload["n"] == 1  # never overwritten
        store.append([ev("r1", 1, n=2)])  # the same conflict again is recorded once
        assert store.stats()["quarantined"] == 1

    def test_a_value_the_backend_refuses_is_quarantined_and_the_rest_appended(
        self, store: Store
    ) -> None:
        # NUL cannot be stored in PostgreSQL text/jsonb (SQLite keeps it): never a raw driver
        # error, and never the batch's other events lost with it.
        result = store.append([ev("r1", 1), ev("r1", 2, note="a\x00b"), ev("r1", 3)])
        assert result.appended + result.rejected == 3
        stored = [e.seq for e in store.run_events("r1")]
        assert {1, 3} <= set(stored)
        assert result.rejected == (0 if store.embedded else 1)
        if result.rejected:
            assert 2 not in stored
            assert store.stats()["quarantined_by_reason"] == {"rejected_by_database": 1}

    # -- errors: the project's, with a next step; never a raw driver error ---------------------
    def test_a_missing_schema_says_run_db_upgrade(self, unmigrated_url: str) -> None:
        bare = open_store(unmigrated_url)
        try:
            for attempt in (
                lambda: bare.read_after(0),
                lambda: bare.append([ev("r1", 1)]),
                lambda: bare.checkpoints(),
            ):
                with pytest.raises(SchemaNotReadyError, match="tracelake db upgrade") as caught:
                    attempt()
                assert not isinstance(caught.value, DBAPIError)
        finally:
            bare.dispose()

    def test_a_refused_database_says_what_to_fix(self, refused_url: str) -> None:
        down = open_store(refused_url)
        try:
            with pytest.raises(StoreError) as caught:
                down.read_after(0)
            assert isinstance(caught.value, (StoreUnavailableError, StoreAccessError))
            assert not isinstance(caught.value, DBAPIError)
            assert "TRACELAKE_DATABASE_URL" in str(caught.value) or "folder" in str(caught.value)
            with pytest.raises(StoreError), down.reading("read a view") as conn:
                conn.execute(sa.text("SELECT 1"))
        finally:
            down.dispose()

    # -- schema --------------------------------------------------------------------------------
    def test_migrations_match_the_schema_module(self, store: Store) -> None:
        assert store.revision() == migrate.head_revision()
        assert store.schema_diff() == []


class TestSqliteStore(StoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        s = open_store(f"sqlite:///{tmp_path / 'tracelake.db'}")
        s.upgrade()
        yield s
        s.dispose()

    @pytest.fixture
    def unmigrated_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'empty.db'}"

    @pytest.fixture
    def refused_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'no-such-folder' / 'tracelake.db'}"

    def replace_statement(self) -> str:
        # SQLite's INSERT OR REPLACE deletes without firing DELETE triggers
        return "INSERT OR REPLACE INTO events SELECT * FROM events"

    def test_payload_is_stored_as_native_json(self, store: Store) -> None:
        store.append([ev("r1", 1, goal="한글 목표")])
        with store.reading() as conn:
            raw = str(conn.exec_driver_sql("SELECT payload FROM events").scalar())
            assert "한글 목표" in raw and "\\u" not in raw
            goal = conn.exec_driver_sql(
                "SELECT json_extract(payload, '$.goal') FROM events"
            ).scalar()
        assert goal == "한글 목표"


@pytest.mark.postgres
class TestPostgresStore(StoreContract):
    @pytest.fixture
    def store(self, pg_server: PgServer) -> Iterator[Store]:
        s = open_store(pg_server.url(pg_server.create(template=pg_server.template)))
        yield s
        s.dispose()

    @pytest.fixture
    def unmigrated_url(self, pg_server: PgServer) -> str:
        return pg_server.url(pg_server.create())

    @pytest.fixture
    def refused_url(self) -> str:
        return "postgresql://postgres@127.0.0.1:9/none?connect_timeout=2"

    def replace_statement(self) -> str:
        return (
            "INSERT INTO events SELECT * FROM events "
            "ON CONFLICT ON CONSTRAINT pk_events DO UPDATE SET type = 'forged'"
        )

    def test_postgres_refuses_truncate(self, store: Store) -> None:
        store.append([ev("r1", 1)])
        with pytest.raises(AppendOnlyViolationError), store.writing("tamper") as conn:
            conn.exec_driver_sql("TRUNCATE events")
        assert store.max_position() > 0

    def test_payload_is_stored_as_native_json(self, store: Store) -> None:
        store.append([ev("r1", 1, goal="한글 목표")])
        with store.reading() as conn:
            kind = conn.exec_driver_sql("SELECT pg_typeof(payload)::text FROM events").scalar()
            assert kind == "jsonb"
            goal = conn.exec_driver_sql("SELECT payload->>'goal' FROM events").scalar()
        assert goal == "한글 목표"

    def test_without_the_lock_a_poller_would_skip(self, store: Store) -> None:
        """The hazard the lock prevents is real: plain inserts commit out of position order."""
        cols = "run_id, seq, type, source, recorded_at, content_hash, payload"
        insert = f"INSERT INTO events ({cols}) VALUES (%s, 1, 't', 'x', now(), 'h', '{{}}')"
        engine = create_engine(store.url, poolclass=sa.NullPool)
        slow = engine.raw_connection()
        fast = engine.raw_connection()
        try:
            slow.cursor().execute(insert, ("slow",))  # takes the lower position, stays open
            fast.cursor().execute(insert, ("fast",))
            fast.commit()
            first_poll = store.read_after(0)
            assert [r.run_id for r in first_poll] == ["fast"]
            slow.commit()
            second_poll = store.read_after(first_poll[-1].position)
            assert second_poll == []  # "slow" committed below the poller's checkpoint: skipped
            assert {r.run_id for r in store.read_after(0)} == {"slow", "fast"}
        finally:
            slow.close()
            fast.close()
            engine.dispose()
