"""The partitioned log (PostgreSQL) keeps the guarantees of the unpartitioned one: keys stay
unique across months under the append lock, rows move in by migration with their positions,
and a month prepared late takes its rows from the DEFAULT partition."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from faker import Faker

from tests.conftest import PgServer
from tracelake.lifecycle.verify import verify
from tracelake.store import NewEvent, Store, migrate, open_store, partitions
from tracelake.store.connection import create_engine, write_transaction

PG = [pytest.mark.postgres, pytest.mark.parametrize("backend", ["postgresql"])]
JAN = datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)
FEB = datetime(2026, 2, 1, 0, 0, 1, tzinfo=UTC)


def _ev(fake: Faker, run: str, seq: int | None, at: datetime, **extra: object) -> NewEvent:
    return NewEvent(
        run_id=run,
        seq=seq,
        type="step.started",
        source="graph_tool_call",
        payload={"text": fake.sentence(), **extra},
        recorded_at=at,
        event_id=extra.get("event_id") if isinstance(extra.get("event_id"), str) else None,  # type: ignore[arg-type]
    )


def _count(store: Store, where: str = "true") -> int:
    with store.reading() as conn:
        return int(conn.execute(sa.text(f"SELECT count(*) FROM events WHERE {where}")).scalar_one())


@PG[0]
@PG[1]
def test_keys_stay_unique_across_months(store: Store, fake: Faker) -> None:
    with store.writing() as conn:
        partitions.ensure_months(conn, JAN)
    jan = [_ev(fake, f"r{i}", 1, JAN) for i in range(20)]
    assert store.append(jan).appended == 20
    # the same events re-sent a month later (a re-ingest): they would land in February's
    # partition, where no unique index sees January; the append lock's lookup does
    feb_same = [replace(e, recorded_at=FEB) for e in jan]
    again = store.append(feb_same)
    assert (again.appended, again.duplicates) == (0, 20)
    # a different event at a taken key in another month: a conflict, quarantined
    clash = store.append([_ev(fake, "r3", 1, FEB)])
    assert (clash.appended, len(clash.conflicts)) == (0, 1)
    # live events (store-numbered) dedupe by event_id across months
    live = NewEvent("live", None, "x", "graph_tool_call", {"a": 1}, JAN, event_id="e-1")
    assert store.append([live]).appended == 1
    assert store.append([replace(live, recorded_at=FEB)]).duplicates == 1
    assert _count(store) == 21
    assert verify(store, full=True).ok


@PG[0]
@PG[1]
def test_concurrent_writers_in_different_months_store_one_copy(store: Store, fake: Faker) -> None:
    with store.writing() as conn:
        partitions.ensure_months(conn, JAN)
    batch = [_ev(fake, f"c{i // 5}", i % 5 + 1, JAN) for i in range(300)]
    shifted = [
        [replace(e, recorded_at=JAN + timedelta(days=31 * k)) for e in batch] for k in range(4)
    ]
    stores = [open_store(store.url) for _ in shifted]
    threads = [
        threading.Thread(target=s.append, args=(b,)) for s, b in zip(stores, shifted, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in stores:
        s.dispose()
    assert _count(store) == 300
    assert verify(store, full=True).ok


@PG[0]
@PG[1]
def test_a_late_month_takes_its_rows_from_the_default_partition(store: Store, fake: Faker) -> None:
    far = datetime(2031, 7, 9, tzinfo=UTC)  # beyond the prepared months: DEFAULT
    store.append([_ev(fake, f"f{i}", 1, far) for i in range(7)])
    with store.reading() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM events_default")).scalar() == 7
    with store.writing() as conn:
        created = partitions.ensure_months(conn, far, far)
    assert "events_p2031_07" in created
    with store.reading() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM events_default")).scalar() == 0
        assert conn.execute(sa.text("SELECT count(*) FROM events_p2031_07")).scalar() == 7
    result = verify(store, full=True)
    assert result.ok and result.schema_problems == [], result


@pytest.mark.postgres
def test_migration_moves_a_populated_log_into_partitions(pg_server: PgServer, fake: Faker) -> None:
    url = pg_server.url(pg_server.create())
    _populated_0005(url, fake)


def test_sqlite_migration_chains_a_populated_log(tmp_path: object, fake: Faker) -> None:
    _populated_0005(f"sqlite:///{tmp_path}/old.db", fake)


def _populated_0005(url: str, fake: Faker) -> None:
    engine = create_engine(url)
    migrate.upgrade(engine, "0005")
    rows = [
        {
            "run_id": f"old-{i // 4}",
            "seq": i % 4 + 1,
            "type": "plan.started",
            "source": "graph_tool_call",
            "recorded_at": datetime(2025, 10, 1, tzinfo=UTC) + timedelta(days=i),
            "content_hash": fake.sha1(),
            "payload": {"goal": fake.sentence()},
        }
        for i in range(120)
    ]
    from tracelake.store.schema import events

    with engine.begin() as conn:
        conn.execute(events.insert(), rows)
        before = [
            tuple(r)
            for r in conn.execute(
                sa.text("SELECT position, run_id, seq FROM events ORDER BY position")
            )
        ]
    migrate.upgrade(engine)
    store = open_store(url, engine)
    with engine.connect() as conn:
        after = [
            tuple(r)
            for r in conn.execute(
                sa.text("SELECT position, run_id, seq FROM events ORDER BY position")
            )
        ]
    assert after == before
    result = verify(store, full=True)
    assert result.ok and result.events == 120, result
    # appends continue the numbering, and old keys are still known
    fresh = store.append(
        [NewEvent("old-0", 1, "plan.started", "graph_tool_call", {"x": 1}, datetime.now(UTC))]
    )
    assert len(fresh.conflicts) == 1
    new = store.append(
        [NewEvent("new", 1, "plan.started", "graph_tool_call", {"x": 1}, datetime.now(UTC))]
    )
    assert new.appended == 1
    assert store.max_position() > before[-1][0]
    if engine.dialect.name == "postgresql":
        names = {p.name for p in partitions.partitions_of(engine)}
        assert {"events_p2025_10", "events_p2026_01", "events_default"} <= names
        assert migrate.schema_diff(engine) == []
    assert verify(store, full=True).ok
    # and back: 0008's downgrade keeps every row and position, then upgrade again
    with engine.connect() as conn:
        kept = [tuple(r) for r in conn.execute(sa.text("SELECT position, run_id FROM events"))]
    migrate.upgrade(engine, "0008")
    from alembic import command

    with write_transaction(engine) as conn:
        command.downgrade(migrate.alembic_config(connection=conn), "0005")
    with engine.connect() as conn:
        back = [tuple(r) for r in conn.execute(sa.text("SELECT position, run_id FROM events"))]
    assert sorted(back) == sorted(kept)
    migrate.upgrade(engine)
    assert verify(store, full=True).ok
    store.append(
        [NewEvent("new", 2, "plan.started", "graph_tool_call", {"x": 2}, datetime.now(UTC))]
    )
    assert store.max_position() > max(p for p, _ in kept)
    engine.dispose()
