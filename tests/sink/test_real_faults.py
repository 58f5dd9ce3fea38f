"""Issue 15: the seven failures found with real faults, each on a private PostgreSQL.

1 hung server (SIGSTOP), 2 a long replay while recording goes on, 3 a full spool disk with the
database up, 4 a full spool disk plus an outage, 5 SIGTERM / SIGKILL of the producer, 6 record()
after close() (test_sink_contract.py), 7 real agentlane objects (test_agentlane_real.py).
Counts are always compared with what ``record()`` accepted; timings are printed, not asserted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.sink.private_pg import PrivatePostgres
from tests.sink.test_faults import _running, assert_exactly_once, stored_keys, wait_for
from tracelake.sink import TraceSink
from tracelake.sink.spool import status
from tracelake.store import open_store

pytestmark = pytest.mark.postgres

SEED = random.randrange(1 << 30)


@pytest.fixture(autouse=True)
def _print_seed() -> Iterator[None]:
    yield
    print(f"seed {SEED}")


def _event(i: int, rng: random.Random) -> dict[str, object]:
    return {
        "type": rng.choice(["step.started", "step.completed", "tool.called"]),
        "stage": "runner",
        "step_id": f"s{i}",
        "i": i,
        "note": "x" * rng.randrange(0, 200),
    }


def _in_order(url: str) -> None:
    """Within every run, seq follows the order the events were recorded in (field ``i``)."""
    store = open_store(url)
    try:
        runs: dict[str, list[tuple[int, int]]] = {}
        for e in store.iter_all():
            runs.setdefault(e.run_id, []).append((e.seq, int(e.payload["i"])))
    finally:
        store.dispose()
    for run, pairs in runs.items():
        order = [i for _, i in sorted(pairs)]
        assert order == sorted(order), f"run {run} is out of order"


def _pace(sink: TraceSink) -> None:
    """A fast runner, but not one that outruns the scrubber's CPU (that is back-pressure,
    counted in queue_full_waits, and not what these tests are about)."""
    while sink.stats()["queued"] > 2_000:
        time.sleep(0.01)


# -- 1. a hung server -------------------------------------------------------------------------


@pytest.mark.slow
def test_hung_server_degrades_spools_and_recovers_by_itself(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tracelake.sink")
    rng = random.Random(SEED)
    sink = TraceSink(
        fresh_db, spool_dir=tmp_path / "spool", db_timeout=1.0, retry_max=0.5, max_queue=5_000
    )
    worst = 0.0
    n = 0
    try:
        for _ in range(300):
            sink.record(_event(n, rng), run_id=f"r{n % 3}")
            n += 1
        assert sink.flush(30)
        private_pg.freeze()
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:  # ~1,000 events/s while the server is stopped
            t = time.perf_counter()
            sink.record(_event(n, rng), run_id=f"r{n % 3}")
            worst = max(worst, time.perf_counter() - t)
            n += 1
            time.sleep(0.001)
        wait_for(lambda: sink.health == "degraded", 10)
        assert sink.flush(30)  # everything is in the spool although the server is hung
        during = sink.stats()
        assert during["queue_full_waits"] == 0 and during["spool_segments"] >= 1
        assert during["replay_lag_events"] > 0 and during["oldest_unwritten_age_s"] > 0
    finally:
        private_pg.thaw()
    wait_for(lambda: sink.health == "healthy", 60)
    sink.close()
    print(f"worst record() during the hang: {worst * 1000:.1f} ms")
    assert sink.stats()["dropped"] == 0
    assert_exactly_once(stored_keys(fresh_db), n)
    _in_order(fresh_db)
    messages = [r.getMessage() for r in caplog.records]
    assert sum("degraded" in m for m in messages) == 1
    assert any("did not return within" in m for m in messages)
    assert any("recovered" in m for m in messages)


def _stream_child(url: str, spool: Path, rate: float, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.sink.child_stream", url, str(spool), str(rate), *extra],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    return child


def _accepted_until(child: subprocess.Popen[str], sig: int, after: float) -> tuple[int, str]:
    """Read the child's counts for ``after`` seconds, send ``sig``, return the last count."""
    assert child.stdout is not None
    last = 0
    timer = threading.Timer(after, child.send_signal, (sig,))
    timer.start()
    try:
        for line in child.stdout:
            found = re.match(r"accepted (\d+)", line)  # a signal may cut the line short
            if found:
                last = int(found.group(1))
    finally:
        timer.cancel()
    _, err = child.communicate(timeout=60)
    return last, err


def _replay_into(url: str, spool: Path) -> int:
    sink = TraceSink(url, spool_dir=spool)
    sink.close(timeout=120)
    return len(stored_keys(url))


@pytest.mark.slow
def _lost_to_sigkill_in_hang(
    private_pg: PrivatePostgres, url: str, spool: Path, rate: float, *extra: str
) -> tuple[int, int]:
    """A producer at *rate* events/s, the server frozen after a second, the producer
    SIGKILLed 3-4 s into the hang: (accepted, stored after replay)."""
    child = _stream_child(url, spool, rate, *extra)
    time.sleep(1.0 if extra else 0.5)
    private_pg.freeze()
    try:
        accepted, err = _accepted_until(child, signal.SIGKILL, 4.0 if extra else 3.0)
    finally:
        private_pg.thaw()
    assert child.returncode == -signal.SIGKILL, err
    stored = _replay_into(url, spool)
    print(f"accepted {accepted}, stored {stored}, lost to SIGKILL {accepted - stored}")
    return accepted, stored


def test_sigkill_during_a_hang_loses_at_most_the_last_flush_interval(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path
) -> None:
    accepted, stored = _lost_to_sigkill_in_hang(private_pg, fresh_db, tmp_path / "spool", 1000)
    # the flush interval is 50 ms (50 events at this rate); the rest is scheduling on 2 CPUs
    assert -10 <= accepted - stored <= 250, (accepted, stored)


@pytest.mark.slow
def test_sigkill_during_a_hang_with_pseudonymised_ids(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path
) -> None:
    """New customer ids need their pseudonym secret from the database: a lookup waits at most
    LOOKUP_TIMEOUT (1 s), then lookups fail at once (those events are kept as minimal records,
    failing closed), so the writer keeps spooling. Found by an attack: the writer sat in a
    lookup for the whole hang and SIGKILL lost 3,046 of 3,999 events."""
    from tracelake.store.subject_secrets import LOOKUP_TIMEOUT

    rate = 500.0
    accepted, stored = _lost_to_sigkill_in_hang(
        private_pg, fresh_db, tmp_path / "spool", rate, "subjects"
    )
    assert -10 <= accepted - stored <= rate * LOOKUP_TIMEOUT + 250, (accepted, stored)


# -- 2. a long replay does not stall recording -------------------------------------------------


@pytest.mark.slow
def test_replay_of_a_backlog_never_fills_the_queue(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    sink = TraceSink(
        fresh_db, spool_dir=tmp_path / "spool", retry_max=0.3, max_queue=3_000, on_full="drop"
    )
    n = 0
    try:
        private_pg.stop()
        for _ in range(8_000):
            sink.record(_event(n, rng), run_id=f"r{n % 5}")
            n += 1
            _pace(sink)
        assert sink.flush(120)  # durable: every event is in the spool now ...
        # ... and the shipper's batch in flight is counted as spooled once its write fails
        wait_for(lambda: sink.stats()["spooled"] == n and sink.stats()["in_flight"] == 0, 30)
    finally:
        private_pg.start()
    replaying_seen = False
    deadline = time.monotonic() + 4.0
    while time.monotonic() < deadline:  # live recording while the backlog is replayed
        sink.record(_event(n, rng), run_id=f"r{n % 5}")
        n += 1
        replaying_seen |= sink.stats()["replay_lag_events"] > 0
        time.sleep(0.0005)
    wait_for(lambda: sink.health == "healthy" and sink.stats()["replay_lag_events"] == 0, 120)
    sink.close(timeout=120)
    stats = sink.stats()
    assert stats["dropped_queue_full"] == 0 and stats["dropped"] == 0
    assert replaying_seen
    assert_exactly_once(stored_keys(fresh_db), n)
    _in_order(fresh_db)


# -- 3 and 4. a full spool disk ---------------------------------------------------------------


@contextlib.contextmanager
def small_disk(path: Path, size: str = "64k") -> Iterator[Path]:
    """A real filesystem of ``size`` (tmpfs; needs root), else an injected ENOSPC."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = (
        os.geteuid() == 0
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
        ).returncode
        == 0
    )
    if not mounted:
        pytest.skip("SKIPPING: cannot mount a small tmpfs (not root); see test_robustness.py")
    try:
        (path / "spool").mkdir()
        with contextlib.suppress(OSError), (path / "filler").open("wb") as f:
            while True:  # fill it: every spool write now fails with ENOSPC
                f.write(b"\0" * 1024)
                f.flush()
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.mark.slow
def test_full_spool_disk_with_the_database_up_writes_straight_through(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tracelake.sink")
    rng = random.Random(SEED)
    with small_disk(tmp_path / "disk") as disk:
        sink = TraceSink(fresh_db, spool_dir=disk / "spool", max_queue=5_000)
        started = time.perf_counter()
        for n in range(20_000):
            sink.record(_event(n, rng), run_id=f"r{n % 4}")
            _pace(sink)
        sink.close(timeout=60)
        took = time.perf_counter() - started
        stats = sink.stats()
    print(f"20,000 events through a full spool disk in {took:.1f}s")
    assert (stats["written"], stats["dropped"], stats["queue_full_waits"]) == (20_000, 0, 0)
    assert_exactly_once(stored_keys(fresh_db), 20_000)
    assert any("cannot write its spool" in r.getMessage() for r in caplog.records)


def test_full_spool_disk_and_an_outage_then_the_database_returns(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path
) -> None:
    """Both refuse: with on_full='drop' the excess is counted; the sink recovers promptly once
    the database is back, and everything not counted as dropped is stored exactly once."""
    rng = random.Random(SEED)
    with small_disk(tmp_path / "disk") as disk:
        sink = TraceSink(
            fresh_db, spool_dir=disk / "spool", max_queue=1_000, on_full="drop", retry_max=0.5
        )
        private_pg.stop()
        try:
            for n in range(3_000):
                sink.record(_event(n, rng), run_id=f"r{n % 4}")
            wait_for(lambda: sink.health == "degraded", 20)
        finally:
            private_pg.start()
        back = time.monotonic()
        wait_for(lambda: sink.health == "healthy", 30)
        print(f"healthy again {time.monotonic() - back:.1f}s after the database came back")
        for n in range(3_000, 4_000):  # and it writes straight through again
            sink.record(_event(n, rng), run_id=f"r{n % 4}")
        sink.close(timeout=60)
        stats = sink.stats()
    dropped = stats["dropped_queue_full"]
    assert dropped > 0 and stats["dropped"] == dropped
    keys = stored_keys(fresh_db)
    assert len(keys) == 4_000 - dropped
    assert len({k[2] for k in keys}) == len(keys)


def test_full_spool_disk_and_an_outage_block_until_the_database_returns(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path
) -> None:
    with small_disk(tmp_path / "disk") as disk:
        sink = TraceSink(fresh_db, spool_dir=disk / "spool", max_queue=500, retry_max=0.5)
        private_pg.stop()
        rng = random.Random(SEED)

        def produce() -> None:
            for n in range(3_000):
                sink.record(_event(n, rng), run_id="r")

        producer = threading.Thread(target=produce)
        try:
            producer.start()
            wait_for(lambda: sink.stats()["queue_full_waits"] > 0, 20)
            assert producer.is_alive()  # on_full='block': record() waits, nothing is dropped
        finally:
            private_pg.start()
        producer.join(60)
        assert not producer.is_alive()
        sink.close(timeout=60)
        assert sink.stats()["dropped"] == 0
    assert_exactly_once(stored_keys(fresh_db), 3_000)
    _in_order(fresh_db)


# -- 5. SIGTERM and SIGKILL of the producer -----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("own_handler", [False, True], ids=["default", "own-handler"])
def test_sigterm_in_a_burst_flushes_then_behaves_as_before(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path, own_handler: bool
) -> None:
    spool = tmp_path / "spool"
    extra = ("own-handler",) if own_handler else ()
    child = _stream_child(fresh_db, spool, 0, *extra)  # as fast as it can
    accepted, err = _accepted_until(child, signal.SIGTERM, 1.5)
    if own_handler:
        assert child.returncode == 3, err  # the program's own handler ran (chained)
    else:
        assert child.returncode == -signal.SIGTERM, err  # died of SIGTERM, as without the sink
    stored = _replay_into(fresh_db, spool)
    print(f"SIGTERM in a burst: accepted {accepted}, stored {stored}")
    assert accepted > 1000
    assert accepted <= stored <= accepted + 10, (accepted, stored)
    assert status(spool)["events"] == 0


@pytest.mark.slow
def test_sigkill_after_a_burst_loses_at_most_the_queue_not_the_spool(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path
) -> None:
    """With the database up, SIGKILL mid-stream: what was spooled or appended survives."""
    spool = tmp_path / "spool"
    child = _stream_child(fresh_db, spool, 2000)
    accepted, err = _accepted_until(child, signal.SIGKILL, 2.0)
    assert child.returncode == -signal.SIGKILL, err
    stored = _replay_into(fresh_db, spool)
    print(f"SIGKILL at 2,000 events/s: accepted {accepted}, stored {stored}")
    assert accepted - 500 <= stored <= accepted + 10
    assert _running(private_pg)


# -- `tracelake spool drain` against a hung server ------------------------------------------


@pytest.mark.slow
def test_spool_drain_gives_up_on_a_hung_server_and_keeps_the_spool(
    private_pg: PrivatePostgres, fresh_db: str, tmp_path: Path
) -> None:
    from tracelake.sink.drain import drain

    spool = tmp_path / "spool"
    down = "postgresql+psycopg://postgres@127.0.0.1:9/unreachable"
    sink = TraceSink(down, spool_dir=spool, db_timeout=0.5, retry_max=0.2, handle_sigterm=False)
    for i in range(200):
        sink.record({"type": "step.completed", "stage": "runner", "i": i}, run_id="drain-1")
    sink.close(timeout=2)
    assert status(spool)["events"] == 200
    private_pg.freeze()
    start = time.monotonic()
    try:
        with pytest.raises(Exception):  # noqa: B017 - the store's error, whichever it is
            drain(fresh_db, spool, timeout=2.0)
    finally:
        private_pg.thaw()
    took = time.monotonic() - start
    print(f"drain against a hung server gave up after {took:.1f} s")
    assert took < 15
    assert status(spool)["events"] == 200  # nothing was lost
    done = drain(fresh_db, spool, timeout=5.0)
    assert done.appended == 200
    assert status(spool)["events"] == 0
    _in_order(fresh_db)
