"""The hash chain: written with every append, verified in full and incrementally, and every
kind of tampering around the triggers found at its first position (both backends)."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from faker import Faker

from tests.lifecycle.helpers import append_in_batches, positions, timed_events
from tracelake.errors import StoreError
from tracelake.lifecycle.verify import verify
from tracelake.store import Store

START = datetime(2026, 5, 3, 8, 0, tzinfo=UTC)


def _fill(store: Store, fake: Faker, rng: random.Random, n: int = 900) -> list[int]:
    append_in_batches(store, timed_events(fake, START, n, timedelta(minutes=7), rng), rng)
    return positions(store)


def test_intact_log_verifies_in_full_and_incrementally(
    store: Store, fake: Faker, rng: random.Random
) -> None:
    stored = _fill(store, fake, rng)
    first = verify(store, full=True)
    assert first.ok, first
    assert (first.events, first.end, first.incremental) == (len(stored), stored[-1], False)
    # re-appending the same batch adds nothing and keeps the chain whole
    more = timed_events(fake, START + timedelta(days=30), 300, timedelta(minutes=3), rng, "b")
    append_in_batches(store, more, rng)
    store.append(more[:50])
    second = verify(store)
    assert second.ok and second.incremental, second
    assert second.start == first.end and second.events == 300
    assert verify(store).events == 0  # nothing new since the checkpoint


def _sqlite(store: Store) -> sqlite3.Connection:
    path = sa.make_url(store.url).database
    assert path
    store.dispose()
    conn = sqlite3.connect(path, isolation_level=None)
    return conn


@pytest.mark.parametrize("backend", ["sqlite"])
def test_sqlite_drop_trigger_and_edit_a_row_is_found_at_that_position(
    store: Store, fake: Faker, rng: random.Random
) -> None:
    stored = _fill(store, fake, rng)
    victim = rng.choice(stored)
    raw = _sqlite(store)
    raw.execute("DROP TRIGGER events_no_update")
    raw.execute(
        "UPDATE events SET payload = json_set(payload, '$.text', ?) WHERE position = ?",
        (fake.sentence(), victim),
    )
    raw.close()
    result = verify(store, full=True)
    assert not result.ok
    assert result.position == victim and result.problem == "event changed since it was appended"
    assert "trigger events_no_update is missing" in result.schema_problems


@pytest.mark.parametrize("backend", ["sqlite"])
def test_sqlite_writable_schema_rewrite_is_found(
    store: Store, fake: Faker, rng: random.Random
) -> None:
    stored = _fill(store, fake, rng)
    victim = rng.choice(stored)
    raw = _sqlite(store)
    # neuter the delete trigger in place: integrity_check still says ok
    raw.execute("PRAGMA writable_schema = ON")
    raw.execute(
        "UPDATE sqlite_master SET sql = replace(sql, 'WHEN NOT EXISTS', 'WHEN 0 AND NOT EXISTS')"
        " WHERE name = 'events_no_delete'"
    )
    raw.execute("PRAGMA writable_schema = OFF")
    raw.close()
    raw = sqlite3.connect(sa.make_url(store.url).database or "", isolation_level=None)
    assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    raw.execute("DELETE FROM events WHERE position = ?", (victim,))  # the trigger lets it pass
    raw.close()
    result = verify(store, full=True)
    assert not result.ok
    after = min((p for p in stored if p > victim), default=None)
    assert result.position in {victim, after}, result
    assert "removed" in (result.problem or "")
    assert "trigger events_no_delete was changed" in result.schema_problems


@pytest.mark.parametrize("backend", ["sqlite"])
def test_sqlite_rows_inserted_around_the_appender_and_forged_links_are_found(
    store: Store, fake: Faker, rng: random.Random
) -> None:
    stored = _fill(store, fake, rng)
    raw = _sqlite(store)
    raw.execute(
        "INSERT INTO events (run_id, seq, type, source, recorded_at, content_hash, payload)"
        " VALUES ('forged', 1, 'plan.started', 'graph_tool_call', '2026-05-04 00:00:00.000000',"
        " 'x', '{}')"
    )
    raw.close()
    result = verify(store, full=True)
    assert (result.ok, result.position) == (False, stored[-1] + 1)
    assert "not covered" in (result.problem or "")
    raw = _sqlite(store)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        raw.execute("DELETE FROM events WHERE run_id = 'forged'")  # no guard row: refused
    raw.close()


def test_edited_chain_record_is_found(store: Store, fake: Faker, rng: random.Random) -> None:
    _fill(store, fake, rng)
    with store.writing() as conn:
        last = conn.execute(sa.text("SELECT min(last_position) FROM event_chain")).scalar()
        conn.execute(
            sa.text("UPDATE event_chain SET head = :h WHERE last_position = :p"),
            {"h": "ab" * 32, "p": last},
        )
    result = verify(store, full=True)
    assert (result.ok, result.position) == (False, last)
    assert "chain record changed" in (result.problem or "")


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"])
def test_postgres_owner_disabling_the_trigger_is_found(
    store: Store, fake: Faker, rng: random.Random
) -> None:
    stored = _fill(store, fake, rng)
    victim, gone = rng.sample(stored[:-1], 2)
    with store.writing() as conn:
        conn.exec_driver_sql("ALTER TABLE events DISABLE TRIGGER events_append_only_row")
        conn.execute(
            sa.text("UPDATE events SET payload = payload || '{\"n\": -1}' WHERE position = :p"),
            {"p": victim},
        )
        conn.execute(sa.text("DELETE FROM events WHERE position = :p"), {"p": gone})
    result = verify(store, full=True)
    after_gone = min(p for p in stored if p > gone)
    assert (result.ok, result.position) == (False, min(victim, after_gone)), (result, victim, gone)
    assert any("disabled" in p for p in result.schema_problems)
    with store.writing() as conn:
        conn.exec_driver_sql("ALTER TABLE events ENABLE TRIGGER events_append_only_row")
        conn.exec_driver_sql(
            "CREATE OR REPLACE FUNCTION tracelake_events_append_only() RETURNS trigger"
            " LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END; $$"
        )
    again = verify(store, full=True)
    assert "the trigger function tracelake_events_append_only() was replaced" in (
        again.schema_problems
    )


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"])
def test_postgres_event_without_a_digest_stops_linking_and_verify_names_it(
    store: Store, fake: Faker, rng: random.Random
) -> None:
    """A payload made NULL around the schema has no digest. The server's string_agg of a
    link's page would skip it and shift every later digest by one position (a fresh-context
    attack on c2709d7): the append refuses instead, and verify names the position."""
    stored = _fill(store, fake, rng, 200)
    with store.writing() as conn:
        conn.exec_driver_sql("ALTER TABLE events ALTER COLUMN payload DROP NOT NULL")
        conn.exec_driver_sql(
            "INSERT INTO events (run_id, seq, type, source, recorded_at, content_hash, payload)"
            " VALUES ('forged', 1, 'step.started', 'graph_tool_call', now(), 'h', NULL)"
        )
    more = timed_events(fake, START + timedelta(days=30), 20, timedelta(minutes=3), rng, "b")
    with pytest.raises(StoreError, match=r"has no digest .*tracelake db verify"):
        store.append(more)
    forged = positions(store)[-1]
    assert forged > stored[-1] and len(positions(store)) == len(stored) + 1  # nothing appended
    result = verify(store, full=True)
    assert (result.ok, result.position, result.events) == (False, forged, len(stored)), result


def test_expected_head_kept_elsewhere_catches_a_recomputed_chain(
    store: Store, fake: Faker, rng: random.Random
) -> None:
    _fill(store, fake, rng, 300)
    kept = verify(store, full=True)
    assert verify(store, expect=(kept.end, kept.head)).ok
    # someone rewrites every link consistently (possible with write access to both tables)
    with store.writing() as conn:
        conn.exec_driver_sql("DELETE FROM event_chain")
        conn.exec_driver_sql("UPDATE chain_anchors SET head = '" + "cd" * 32 + "'")
        from tracelake.store import chain

        chain.link_appended(conn)
    assert verify(store, full=True).ok  # self-consistent again...
    caught = verify(store, expect=(kept.end, kept.head))
    assert not caught.ok and caught.position == kept.end  # ...but not the head kept outside
