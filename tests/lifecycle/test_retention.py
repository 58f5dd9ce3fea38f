"""Retention: every event recorded before the cut is archived and removed (counts equal, the
archive holds exactly those rows), whole partitions are dropped on PostgreSQL, the chain stays
verifiable from the new anchor, and the guard never lets a plain DELETE through."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
import sqlalchemy as sa
from faker import Faker

from tests.lifecycle.helpers import append_in_batches, positions, timed_events
from tracelake.errors import AppendOnlyViolationError
from tracelake.lifecycle import retention
from tracelake.lifecycle.verify import verify
from tracelake.store import Store, partitions

START = datetime(2026, 1, 20, 6, 0, tzinfo=UTC)


def _prepare_months(store: Store) -> None:
    """A database that has run since before START has its monthly partitions."""
    if store.dialect == "postgresql":
        with store.writing() as conn:
            partitions.ensure_months(conn, START - timedelta(days=40))


def _before(store: Store, cut: datetime) -> list[int]:
    with store.reading() as conn:
        return positions(store, "recorded_at < :cut", cut=retention._p(conn, cut))


def test_retention_archives_exactly_what_it_removes_and_the_chain_still_verifies(
    store: Store, fake: Faker, rng: random.Random, tmp_path: Path
) -> None:
    _prepare_months(store)
    events = timed_events(fake, START, 2500, timedelta(minutes=61), rng)
    append_in_batches(store, events, rng)
    cut = START + timedelta(days=rng.randint(45, 80), minutes=rng.randint(0, 1439))
    doomed = _before(store, cut)
    kept = [p for p in positions(store) if p not in set(doomed)]
    assert doomed and kept

    report = retention.apply(store, cut, tmp_path / "archive")

    assert report.archived == report.removed == len(doomed)
    archived = pl.read_parquet(tmp_path / "archive" / "**" / "*.parquet")
    assert sorted(archived["position"].to_list()) == doomed
    assert archived["recorded_at"].max() < cut  # type: ignore[operator]
    assert set(archived.columns) >= {"payload", "run_id", "seq", "recorded_at"}
    lifecycle = positions(store, "source = 'tracelake'")
    assert [p for p in positions(store) if p not in lifecycle] == kept
    assert _before(store, cut) == []
    if store.dialect == "postgresql":
        # the months wholly before the cut went as whole partitions
        whole = [p for p in report.dropped_partitions]
        assert whole and all(p.startswith("events_p202") for p in whole)
        assert all(end <= cut for end in _ends(whole))
        left = {p.name for p in store.partitions()}
        assert not left & set(whole)
        assert report.trimmed < report.removed
    result = verify(store, full=True)
    assert result.ok, result
    assert result.start == report.anchor_position
    # the log goes on: more appends, a second retention, still verifiable
    append_in_batches(store, timed_events(fake, cut, 400, timedelta(minutes=30), rng, "later"), rng)
    second_cut = cut + timedelta(days=3)
    second = retention.apply(store, second_cut, tmp_path / "archive")
    assert second.archived == second.removed > 0
    assert _before(store, second_cut) == []
    assert verify(store, full=True).ok
    assert verify(store).ok
    # the retention.applied events carry counts and names only
    with store.reading() as conn:
        applied = conn.execute(
            sa.text("SELECT count(*) FROM events WHERE type = 'retention.applied'")
        ).scalar()
    assert applied == 2


def test_plain_delete_is_still_refused_after_retention(
    store: Store, fake: Faker, rng: random.Random, tmp_path: Path
) -> None:
    _prepare_months(store)
    append_in_batches(store, timed_events(fake, START, 300, timedelta(hours=5), rng), rng)
    retention.apply(store, START + timedelta(days=20), tmp_path)
    with (
        pytest.raises(AppendOnlyViolationError),
        store.writing("tamper") as conn,
    ):
        conn.exec_driver_sql("DELETE FROM events")
    assert verify(store, full=True).schema_problems == []


def test_retention_refuses_a_broken_chain(
    store: Store, fake: Faker, rng: random.Random, tmp_path: Path
) -> None:
    _prepare_months(store)
    append_in_batches(store, timed_events(fake, START, 200, timedelta(hours=5), rng), rng)
    with store.writing() as conn:
        conn.exec_driver_sql("UPDATE event_chain SET head = '" + "ee" * 32 + "'")
    before = positions(store)
    with pytest.raises(Exception, match="chain is broken"):
        retention.apply(store, START + timedelta(days=20), tmp_path)
    assert positions(store) == before


def test_nothing_before_the_cut_removes_nothing(
    store: Store, fake: Faker, rng: random.Random, tmp_path: Path
) -> None:
    append_in_batches(store, timed_events(fake, START, 50, timedelta(hours=1), rng), rng)
    report = retention.apply(store, START - timedelta(days=30), tmp_path)  # stragglers < 17 d
    assert (report.archived, report.removed, report.files) == (0, 0, [])
    assert verify(store, full=True).ok


def _ends(names: list[str]) -> list[datetime]:
    out = []
    for name in names:
        year, month = int(name[8:12]), int(name[13:15])
        out.append(partitions.next_month(datetime(year, month, 1, tzinfo=UTC)))
    return out


def test_removed_positions_are_never_handed_out_again(
    store: Store, fake: Faker, rng: random.Random, tmp_path: Path
) -> None:
    """A poller reading "after N" must never miss an event: after retention removes the
    newest events too, new ones still get higher positions (SQLite needs AUTOINCREMENT)."""
    append_in_batches(store, timed_events(fake, START, 120, timedelta(minutes=5), rng), rng)
    high = max(positions(store))
    retention.apply(store, START + timedelta(days=400), tmp_path)
    assert positions(store) == [high + 1]  # only retention.applied is left
    append_in_batches(store, timed_events(fake, START, 30, timedelta(minutes=5), rng, "n"), rng)
    assert min(positions(store, "source = 'graph_tool_call'")) > high + 1
    assert verify(store, full=True).ok
