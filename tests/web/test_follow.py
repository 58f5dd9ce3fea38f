"""``project --follow``: new events are projected without anyone running ``tracelake project``
(woken by NOTIFY on PostgreSQL — the safety-net poll is set to an hour here, so only the
notification can wake it — and by polling on SQLite); two followers never both work; a killed
leader's lock is released; a dropped connection is survived. Both backends."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa

from tests.conftest import REPO
from tests.ingest.helpers import ingest_bytes
from tests.projections.helpers import snapshot
from tests.web import helpers
from tracelake.projections import ProjectionEngine
from tracelake.projections.follow import Follower, start_thread
from tracelake.store import Store

WAIT = 90.0  # generous: the machine is shared; never a timing assertion, only a deadline


def until(what: str, check: Callable[[], bool], timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for: {what}")


def caught_up(store: Store) -> bool:
    low = min(ProjectionEngine(store).checkpoints().values())
    return low == store.max_position() and low > 0


def some_runs(tag: str, names: set[str] | None = None) -> bytes:
    return helpers.envelopes("orders-api", tag, random.Random(tag), names or {"timeout", "coerced"})


@pytest.fixture
def following(store: Store) -> Iterator[Callable[..., Follower]]:
    started: list[tuple[threading.Event, threading.Thread]] = []

    def start(**kw: float) -> Follower:
        kw = {"poll_interval": 0.1, "notify_fallback": 3600.0, "standby_interval": 0.2, **kw}
        f = Follower(store, **kw)  # type: ignore[arg-type]
        stop = threading.Event()
        started.append((stop, start_thread(f, stop)))
        f.stop = stop  # type: ignore[attr-defined]
        return f

    yield start
    for stop, thread in started:
        stop.set()
        thread.join(timeout=30)


def test_follower_projects_new_events_and_equals_a_rebuild(
    store: Store, following: Callable[..., Follower]
) -> None:
    ingest_bytes(store, some_runs("before"))
    f = following()
    until("the follower leads and caught up", lambda: f.state.leader and caught_up(store))
    for i in range(3):  # several appends while it waits
        ingest_bytes(store, some_runs(f"live{i}", {"order_detail", "binding_repaired"}))
        until(f"append {i} projected", lambda: caught_up(store))
    until("counted", lambda: f.state.events == store.max_position())
    followed = snapshot(store)
    ProjectionEngine(store).rebuild()
    assert snapshot(store) == followed


def test_two_followers_one_works_the_other_takes_over(
    store: Store, following: Callable[..., Follower]
) -> None:
    a, b = following(), following()
    until("one leader", lambda: a.state.leader or b.state.leader)
    time.sleep(1.0)  # both had time to try
    assert [a.state.leader, b.state.leader].count(True) == 1
    leader, standby = (a, b) if a.state.leader else (b, a)
    ingest_bytes(store, some_runs("one"))
    until("caught up by the leader", lambda: caught_up(store))
    assert standby.state.catch_ups == 0  # it never did the work
    leader.stop.set()  # type: ignore[attr-defined]
    until("the standby takes over", lambda: standby.state.leader)
    ingest_bytes(store, some_runs("two"))
    until("caught up by the new leader", lambda: caught_up(store))
    until("the new leader counted its work", lambda: standby.state.events > 0)


def _follow_cli(db_url: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TRACELAKE_DATABASE_URL": db_url, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "tracelake", "project", "--follow"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def test_cli_follow_stops_on_sigterm_and_a_killed_leader_releases_its_lock(
    store: Store, db_url: str, following: Callable[..., Follower]
) -> None:
    proc = _follow_cli(db_url)
    try:
        ingest_bytes(store, some_runs("cli"))
        until("the CLI follower projected", lambda: caught_up(store))
        mine = following()
        time.sleep(1.0)
        assert not mine.state.leader  # the CLI process leads
        proc.send_signal(signal.SIGKILL)  # the worst moment: no cleanup at all
        proc.communicate(timeout=30)  # reaps it and closes the pipes
        until("the lock of the killed process is released", lambda: mine.state.leader)
        ingest_bytes(store, some_runs("after-kill"))
        until("caught up after the kill", lambda: caught_up(store))
        mine.stop.set()  # type: ignore[attr-defined]
        until("released", lambda: not mine.state.leader)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    second = _follow_cli(db_url)
    try:
        ingest_bytes(store, some_runs("sigterm"))
        until("the second CLI follower projected", lambda: caught_up(store))
        second.send_signal(signal.SIGTERM)
        out, err = second.communicate(timeout=60)
    finally:
        if second.poll() is None:
            second.kill()
            second.communicate(timeout=30)
    assert second.returncode == 0, err
    assert "applied" in out and "stopped:" in out


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_follower_survives_its_connection_being_killed(
    store: Store, following: Callable[..., Follower]
) -> None:
    f = following()
    until("leading", lambda: f.state.leader)
    engine = sa.create_engine(store.url, poolclass=sa.NullPool)
    with engine.connect() as conn:
        killed = conn.execute(
            sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND query LIKE 'LISTEN%'"
            )
        ).all()
    engine.dispose()
    assert killed
    until("the error is noticed", lambda: f.state.errors >= 1)
    # the store translated the driver's error (it says what happened and what to do)
    assert (f.state.last_error or "").startswith("StoreUnavailableError: follow the log"), (
        f.state.last_error
    )
    ingest_bytes(store, some_runs("after-outage"))
    until("caught up after reconnecting", lambda: caught_up(store))
    assert f.state.leader
