"""Fault tests against a PostgreSQL server the tests start and stop themselves."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.conftest import REPO
from tests.sink.private_pg import PrivatePostgres
from tracelake.demo import run_scenario, scenarios
from tracelake.sink import TraceSink
from tracelake.sink.spool import status
from tracelake.store import open_store

pytestmark = pytest.mark.postgres


def stored_keys(url: str) -> list[tuple[str, int, str]]:
    store = open_store(url)
    try:
        return [(e.run_id, e.seq, e.event_id or "") for e in store.iter_all()]
    finally:
        store.dispose()


def assert_exactly_once(keys: list[tuple[str, int, str]], expected: int) -> None:
    assert len(keys) == expected
    assert len({k[2] for k in keys}) == expected  # no event twice
    for run, n in Counter(k[0] for k in keys).items():  # every run numbered 1..n, no gaps
        assert sorted(k[1] for k in keys if k[0] == run) == list(range(1, n + 1))


def wait_for(predicate: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def test_server_stopped_mid_stream_and_started_again(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tracelake.sink")
    sink = TraceSink(fresh_db, spool_dir=tmp_path / "spool", flush_interval=0.01, retry_max=0.3)
    total = 0
    all_scenarios = scenarios()
    try:
        for i, s in enumerate(all_scenarios * 3):
            if i == 10:
                assert sink.flush(30)
                private_pg.stop()
            if i == 30:
                assert sink.flush(30)
                # everything is in the spool; the sink says "degraded" once it has tried the
                # stopped server (a backlog can be spooled before the shipper tries)
                wait_for(lambda: sink.health == "degraded")
                private_pg.start()
            total += sum(1 for _ in sink.tap(run_scenario(s), run_id=f"run-{i:03d}"))
        wait_for(lambda: sink.health == "healthy")
    finally:
        sink.close()
        if not _running(private_pg):
            private_pg.start()
    stats = sink.stats()
    assert stats["spooled"] > 0 and stats["replayed"] > 0 and stats["dropped"] == 0
    assert_exactly_once(stored_keys(fresh_db), total)
    messages = [r.getMessage() for r in caplog.records]
    assert any("degraded" in m for m in messages) and any("recovered" in m for m in messages)
    assert status(tmp_path / "spool")["events"] == 0


def _running(server: PrivatePostgres) -> bool:
    try:
        server.execute("SELECT 1")
        return True
    except Exception:  # noqa: BLE001 - any failure: not running
        return False


def _child(url: str, spool: Path, n: int, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.sink.child", url, str(spool), str(n), mode],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("mode", ["close", "flush"])
def test_killed_producer_loses_nothing_and_the_next_sink_replays_its_spool(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path, mode: str
) -> None:
    """close() returned (or flush() with the server down), then SIGKILL: all events survive."""
    spool = tmp_path / "spool"
    private_pg.stop()
    try:
        child = _child(fresh_db, spool, 500, mode)
        assert child.stdout is not None
        line = child.stdout.readline()
        child.send_signal(signal.SIGKILL)
        _, err = child.communicate(timeout=10)
        assert line.startswith(("closed", "flushed")), err
        assert status(spool)["events"] == 500
    finally:
        private_pg.start()
    sink = TraceSink(fresh_db, spool_dir=spool, flush_interval=0.01)  # replays on start
    sink.close()
    assert sink.stats()["replayed"] == 500
    assert_exactly_once(stored_keys(fresh_db), 500)
    assert status(spool)["events"] == 0
    again = TraceSink(fresh_db, spool_dir=spool)  # nothing left to replay twice
    again.close()
    assert again.stats()["replayed"] == 0
    assert len(stored_keys(fresh_db)) == 500


def _refuse(private_pg: PrivatePostgres, url: str, how: str, on: bool) -> None:
    db = sa.make_url(url).database
    if how == "read_only":
        value = "on" if on else "off"
        private_pg.execute(f"ALTER DATABASE {db} SET default_transaction_read_only = {value}")
        private_pg.execute(  # existing sessions keep their setting: make them reconnect
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}'"
        )
        return
    engine = sa.create_engine(url, poolclass=sa.NullPool, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        if on:  # a full disk, as the server reports it (SQLSTATE 53100)
            conn.exec_driver_sql(
                "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "RAISE EXCEPTION 'could not extend file: No space left on device' "
                "USING ERRCODE = 'disk_full'; END; $$;"
                "CREATE TRIGGER disk_full BEFORE INSERT ON events "
                "FOR EACH ROW EXECUTE FUNCTION disk_full()"
            )
        else:
            conn.exec_driver_sql("DROP TRIGGER disk_full ON events; DROP FUNCTION disk_full()")
    engine.dispose()


@pytest.mark.parametrize("how", ["read_only", "disk_full"])
def test_server_refusing_writes_is_handled_like_an_outage(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path, how: str
) -> None:
    sink = TraceSink(fresh_db, spool_dir=tmp_path / "spool", flush_interval=0.01, retry_max=0.3)
    try:
        n = sum(1 for _ in sink.tap(run_scenario(scenarios()[0]), run_id="before"))
        assert sink.flush(30)
        _refuse(private_pg, fresh_db, how, on=True)
        n += sum(1 for _ in sink.tap(run_scenario(scenarios()[1]), run_id="during"))
        assert sink.flush(30)
        wait_for(lambda: sink.health == "degraded")
        assert sink.stats()["spooled"] > 0
        _refuse(private_pg, fresh_db, how, on=False)
        wait_for(lambda: sink.health == "healthy")
    finally:
        sink.close()
    assert sink.stats()["dropped"] == 0
    assert_exactly_once(stored_keys(fresh_db), n)


def test_interpreter_exit_flushes_without_close(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path
) -> None:
    child = _child(fresh_db, tmp_path / "spool", 300, "exit")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0 and out.startswith("exiting"), err
    assert_exactly_once(stored_keys(fresh_db), 300)
