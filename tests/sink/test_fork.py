"""A runner process that forks while its sink is open (gunicorn ``--preload``, multiprocessing's
``fork``): the child's events are stored, the parent's are stored once, and neither side's
spool, database connection or scrubber process is closed by the other.

Found by an attack on the sink: a forked child's close() appended to the parent's spool
segment, which the parent then deleted as delivered (0 of 1,000 child events stored); with the
scrubber process the child never exited. Real parts: os.fork, multiprocessing's fork pool, a
real scrubber process, SQLite and PostgreSQL.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import sys
from pathlib import Path

import pytest

from tracelake.sink import TraceSink
from tracelake.store import Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")


def _ticks(store: Store, run_id: str) -> list[int]:
    return [e.payload["i"] for e in store.run_events(run_id)]


@pytest.mark.parametrize("scrub_process", [False, True], ids=["thread", "process"])
def test_a_forked_child_records_into_its_own_sink(
    db_url: str, store: Store, tmp_path: Path, scrub_process: bool
) -> None:
    n = random.randrange(300, 1500)
    sink = TraceSink(
        db_url, spool_dir=tmp_path / "spool", scrub_process=scrub_process, handle_sigterm=False
    )
    assert sink.wait_until_ready(120)
    for i in range(100):
        sink.record({"type": "custom.tick", "i": i}, run_id="parent-before")
    pid = os.fork()
    if pid == 0:  # the child: record, then leave as a script does (atexit closes the sink)
        code = 1
        try:
            for i in range(n):
                sink.record({"type": "custom.tick", "i": i}, run_id="child")
            code = 0
        finally:
            # sys.exit would unwind into pytest; run the interpreter's exit hooks, then leave
            import atexit

            atexit._run_exitfuncs()
            os._exit(code)
    for i in range(100):
        sink.record({"type": "custom.tick", "i": i}, run_id="parent-after")
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sink.flush(60)
    stats = sink.stats()
    sink.close()
    assert stats["dropped"] == 0 and stats["recorded"] == 200
    assert _ticks(store, "parent-before") == list(range(100))
    assert _ticks(store, "parent-after") == list(range(100))
    assert _ticks(store, "child") == list(range(n)), f"n={n}"


def _pool_worker(args: tuple[int, int]) -> int:
    from tracelake.sink import live

    (sink,) = live.SINKS  # the parent's sink, started afresh in this process
    worker, n = args
    for i in range(n):
        sink.record({"type": "custom.tick", "i": i}, run_id=f"worker-{worker}")
    return n


def test_multiprocessing_fork_workers_store_their_events(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    """Pool workers leave through os._exit (no atexit): their sinks close through
    multiprocessing's exit hook."""
    sink = TraceSink(db_url, spool_dir=tmp_path / "spool", handle_sigterm=False)
    sizes = [random.randrange(50, 400) for _ in range(6)]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2, maxtasksperchild=2) as pool:
        done = pool.map(_pool_worker, list(enumerate(sizes)))
        pool.close()
        pool.join()
    sink.close()
    assert done == sizes
    for worker, n in enumerate(sizes):
        assert _ticks(store, f"worker-{worker}") == list(range(n)), f"worker {worker}: {sizes}"
