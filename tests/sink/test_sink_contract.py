"""Issue 15 case 6 (record() after close), the stats a runner exports, objects that are
dataclasses *and* have to_dict() (agentlane's shape), and issue 10's missing-schema line."""

from __future__ import annotations

import enum
import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from faker import Faker

from tests.sink.private_pg import PrivatePostgres
from tests.sink.test_faults import assert_exactly_once, stored_keys, wait_for
from tracelake.runners import to_jsonable
from tracelake.sink import TraceSink
from tracelake.store import Store, migrate, open_store
from tracelake.store.connection import create_engine


class Kind(enum.Enum):
    TOOL_START = "tool_start"


@dataclass
class DataclassWithToDict:
    """Like agentlane's RunEvent: a dataclass whose to_dict() is the wire form."""

    kind: Kind = Kind.TOOL_START
    payload: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind.value, "payload": self.payload, "schema_version": 1}


def test_to_dict_wins_over_the_dataclass_branch() -> None:
    out = to_jsonable(DataclassWithToDict(payload={"a": 1}), 16)
    assert out == {"type": "tool_start", "payload": {"a": 1}, "schema_version": 1}


def test_integers_too_long_to_print_are_stored_cut(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    """Python refuses str() of ints past ~4,300 digits: such a value is stored as its size, not
    the event quarantined (an attack found it quarantined as unreadable_event)."""
    random = Faker().random
    digits = random.randrange(4_400, 50_000)
    sink = TraceSink(db_url, spool_dir=tmp_path / "spool", flush_interval=0.01)
    sink.record({"type": "custom.big", "n": 10**digits, "m": 10**4_100}, run_id="big")
    sink.close()
    assert sink.stats()["quarantined"] == 0
    (event,) = store.run_events("big")
    assert event.payload["n"] == f"[an integer of about {digits + 1} digits]"
    assert event.payload["m"].endswith("…") and "0" * 20 not in event.payload["m"]  # cut


def test_dataclass_events_with_to_dict_are_stored_not_quarantined(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    fake = Faker(["en_US", "ja_JP", "de_DE"])
    seed = fake.random_int()
    Faker.seed(seed)
    sink = TraceSink(db_url, spool_dir=tmp_path / "spool", flush_interval=0.01)
    for _ in range(25):
        sink.record(DataclassWithToDict(payload={"q": fake.sentence()}), run_id="run-dc")
    sink.close()
    stats = sink.stats()
    assert (stats["written"], stats["quarantined"]) == (25, 0), f"seed {seed}"
    assert {e.type for e in store.run_events("run-dc")} == {"tool_start"}


def test_record_after_close_is_counted_as_dropped_and_logged_once(
    db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="tracelake.sink")
    sink = TraceSink(db_url, spool_dir=tmp_path / "spool")
    sink.record({"type": "x"}, run_id="r")
    sink.close()
    for _ in range(3):
        sink.record({"type": "late"}, run_id="r")
    stats = sink.stats()
    assert (stats["written"], stats["dropped"], stats["dropped_after_close"]) == (1, 3, 3)
    late = [r for r in caplog.records if "after close()" in r.getMessage()]
    assert len(late) == 1


def test_stats_expose_the_gauges_a_runner_exports(db_url: str, tmp_path: Path) -> None:
    sink = TraceSink(db_url, spool_dir=tmp_path / "spool")
    try:
        stats = sink.stats()
    finally:
        sink.close()
    for key in (
        "queued",
        "spool_bytes",
        "spool_segments",
        "replay_lag_events",
        "oldest_unwritten_age_s",
        "dropped",
        "health",
    ):
        assert key in stats


def test_on_full_must_be_block_or_drop(db_url: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="on_full"):
        TraceSink(db_url, spool_dir=tmp_path / "spool", on_full="wait")  # type: ignore[arg-type]


def test_on_full_drop_counts_what_it_drops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Database unreachable and the spool refusing (ENOSPC): the queue fills and is dropped."""
    from tracelake.sink import spool as spool_module

    monkeypatch.setenv("TRACELAKE_PSEUDONYM_KEY", "k" * 32)

    def full(*_args: Any, **_kw: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spool_module.Spool, "append", full)
    sink = TraceSink(
        "postgresql://postgres@127.0.0.1:9/unreachable",
        spool_dir=tmp_path / "spool",
        max_queue=50,
        on_full="drop",
        retry_max=0.05,
    )
    for i in range(2_000):
        sink.record({"type": "x", "i": i}, run_id="r")
    sink.close(timeout=1)
    stats = sink.stats()
    assert stats["dropped_queue_full"] > 0
    assert stats["dropped"] == 2_000  # nothing could be kept: every event is accounted for


def test_sqlite_without_schema_is_migrated_by_the_sink(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    sqlite3.connect(tmp_path / "fresh.db").close()  # exists, empty
    sink = TraceSink(url, spool_dir=tmp_path / "spool")
    for i in range(10):
        sink.record({"type": "step.completed", "i": i}, run_id="r")
    sink.close()
    assert sink.stats()["written"] == 10
    store = open_store(url)
    try:
        assert store.stats()["events"] == 10
    finally:
        store.dispose()


@pytest.mark.postgres
def test_postgres_without_schema_says_so_in_one_line_then_catches_up(
    private_pg: PrivatePostgres, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import time

    import sqlalchemy as sa

    caplog.set_level(logging.WARNING, logger="tracelake.sink")
    name = f"noschema_{time.time_ns()}"
    private_pg.execute(f"CREATE DATABASE {name}")
    url = sa.make_url(private_pg.url).set(database=name).render_as_string(hide_password=False)
    sink = TraceSink(url, spool_dir=tmp_path / "spool", retry_max=0.2)
    try:
        for i in range(200):
            sink.record({"type": "step.completed", "i": i}, run_id="r")
        wait_for(lambda: sink.health == "degraded", 20)
        assert sink.flush(30)
        engine = create_engine(url, poolclass=sa.NullPool)
        migrate.upgrade(engine)  # what the log line says to do
        engine.dispose()
        wait_for(lambda: sink.health == "healthy", 30)
    finally:
        sink.close()
    said = [r.getMessage() for r in caplog.records if "no tracelake schema" in r.getMessage()]
    assert len(said) == 1 and "tracelake db upgrade" in said[0]
    assert_exactly_once(stored_keys(url), 200)


def test_a_slow_database_overflows_the_hand_over_and_loses_nothing(tmp_path: Path) -> None:
    """Another writer holds SQLite's write lock: appends wait, the hand-over fills, live
    batches stay only in (small, rotating) spool segments and are replayed from disk; a
    segment whose handed-over records were appended is never deleted while it also holds
    records that were not handed over."""
    import threading
    import time

    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'slow.db'}"
    engine = create_engine(url)
    migrate.upgrade(engine)
    sink = TraceSink(
        url, spool_dir=tmp_path / "spool", batch_size=20, max_queue=100, flush_interval=0.005
    )
    sink.spool.max_segment_bytes = 60_000  # rotate often (a few batches per segment)
    locked = threading.Event()
    release = threading.Event()

    def hold_the_lock() -> None:
        from tracelake.store.connection import write_transaction

        with write_transaction(engine) as conn:  # BEGIN IMMEDIATE: the write lock
            conn.exec_driver_sql("SELECT 1").all()
            locked.set()
            release.wait(20)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    locked.wait(10)
    try:
        for i in range(3_000):
            sink.record({"type": "step.completed", "i": i}, run_id=f"r{i % 3}")
            if i % 50 == 0:
                time.sleep(0.005)
        assert sink.flush(30)
        assert sink.stats()["spooled"] > 0  # the hand-over overflowed into the spool
    finally:
        release.set()
        holder.join()
    sink.close(timeout=60)
    engine.dispose()
    assert sink.stats()["dropped"] == 0
    assert_exactly_once(stored_keys(url), 3_000)
    with sa.create_engine(url).connect() as conn:
        rows = conn.exec_driver_sql("SELECT run_id, seq, payload FROM events").all()
    assert len(rows) == 3_000


def test_run_and_event_ids_shaped_like_credentials_are_pseudonymised(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    """Ids are kept as given unless something in them is personal or credential-shaped: a
    provider's key prefix, or a mixed-case token of letters and digits (found by an attack:
    `ev-sat_...` and `tenant-sk-proj-...` were stored verbatim). Plain ids stay readable."""
    import secrets as stdlib_secrets

    def token(n: int) -> str:
        while True:  # a token in both cases with digits, as issued tokens are
            t = stdlib_secrets.token_urlsafe(n).replace("-", "").replace("_", "")
            if not t.islower() and not t.isupper() and any(c.isdigit() for c in t):
                return t

    planted = [
        f"sat_{token(30)}",
        f"sk-proj-{token(40)}",
        f"ghp_{token(30)}",
        f"xoxb-{stdlib_secrets.randbelow(10**12)}-{token(24)}",
        f"AKIA{stdlib_secrets.token_hex(8).upper()}",
        token(32),
    ]
    plain = ["run-" + stdlib_secrets.token_hex(16), "order-2024-05-13-001"]
    sink = TraceSink(db_url, spool_dir=tmp_path / "spool", flush_interval=0.01)
    for i, value in enumerate(planted + plain):
        sink.record({"type": "custom.id", "event_id": f"ev-{value}"}, run_id=f"tenant-{value}")
        sink.record({"type": "custom.id", "i": i}, run_id=f"tenant-{value}")
    sink.close()
    stored = [(e.run_id, e.event_id or "") for e in store.iter_all()]
    text = repr(stored)
    leaked = [v for v in planted if v in text]
    assert not leaked, f"stored verbatim: {leaked}"
    for value in plain:
        assert f"tenant-{value}" in text, f"a plain id was pseudonymised: {value}"
    assert len({run for run, _ in stored}) == len(planted + plain)  # runs still group
