"""A runner process that forks while its sink is open (gunicorn ``--preload``, multiprocessing's
``fork``): the child's events are stored, the parent's are stored once, and neither side's
spool, database connection or scrubber process is closed by the other.

Found by an attack on the sink: a forked child's close() appended to the parent's spool
segment, which the parent then deleted as delivered (0 of 1,000 child events stored); with the
scrubber process the child never exited. Real parts: os.fork, multiprocessing's fork pool, a
real scrubber process, SQLite and PostgreSQL.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.interpreter import run_python
from tracelake.sink import TraceSink
from tracelake.store import Store, open_store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")


def _ticks(store: Store, run_id: str) -> list[int]:
    return [e.payload["i"] for e in store.run_events(run_id)]


def scenario_forked_child(db_url: str, spool: str, scrub_process: bool) -> None:
    n = random.randrange(300, 1500)
    sink = TraceSink(db_url, spool_dir=spool, scrub_process=scrub_process, handle_sigterm=False)
    assert sink.wait_until_ready(120)
    for i in range(100):
        sink.record({"type": "custom.tick", "i": i}, run_id="parent-before")
    pid = os.fork()
    if pid == 0:  # the child: record, then leave through the exit hooks, as a script does
        code = 1
        try:
            for i in range(n):
                sink.record({"type": "custom.tick", "i": i}, run_id="child")
            code = 0
        finally:
            import atexit

            atexit._run_exitfuncs()
            os._exit(code)
    for i in range(100):
        sink.record({"type": "custom.tick", "i": i}, run_id="parent-after")
    assert _exit_code(pid) == 0
    assert sink.flush(60)
    stats = sink.stats()
    sink.close()
    _replay_left(db_url, Path(spool))
    assert stats["dropped"] == 0 and stats["recorded"] == 200
    with _opened(db_url) as store:
        assert _ticks(store, "parent-before") == list(range(100))
        assert _ticks(store, "parent-after") == list(range(100))
        assert _ticks(store, "child") == list(range(n)), f"n={n}"


@pytest.mark.parametrize("scrub_process", [False, True], ids=["thread", "process"])
def test_a_forked_child_records_into_its_own_sink(
    db_url: str, tmp_path: Path, scrub_process: bool
) -> None:
    _fresh("scenario_forked_child", db_url, str(tmp_path / "spool"), scrub_process)


def _fresh(scenario: str, *args: object) -> None:
    """Run a scenario of this module in a new interpreter: the test process's other threads
    (coverage's tracer, pytest's) hold locks at fork that the scenario's children would wait
    on; a production runner that forks has its own threads only (the sink's)."""
    code = (
        "import sys, json\n"
        "from tests.sink import test_fork\n"
        f"test_fork.{scenario}(*json.loads(sys.argv[1]))\n"
    )
    run_python(code, json.dumps(args), env={**os.environ, "PYTHONPATH": str(REPO)})


def _assert_workers_stored(db_url: str, sizes: list[int]) -> None:
    with _opened(db_url) as store:
        for worker, n in enumerate(sizes):
            assert _ticks(store, f"worker-{worker}") == list(range(n)), f"{worker}: {sizes}"


@contextlib.contextmanager
def _opened(db_url: str) -> Iterator[Store]:
    store = open_store(db_url)
    try:
        yield store
    finally:
        store.dispose()


def _replay_left(db_url: str, spool: Path) -> None:
    """What a child's close could not append in time (a busy SQLite file under load) is in its
    spool owner folder: the next sink replays it, as it would in production."""
    TraceSink(db_url, spool_dir=spool, handle_sigterm=False).close(timeout=60)


def _exit_code(pid: int, timeout: float = 90.0) -> int:
    """The child's exit code; a child that hangs (a lock held at fork) is killed and fails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"the forked child did not finish in {timeout:.0f}s")


def test_locks_held_by_another_thread_at_fork_are_new_in_the_child() -> None:
    """gunicorn --preload forks workers right after the sink starts, while its writer may be
    building the scrubber under a module lock: the child must not inherit that lock held (an
    attack's child waited on it for good: /tmp/attack2/fork_block.py of that session)."""
    from tracelake.scrub import analyzer, hangul, policy, scrubber

    held = [analyzer._LOCK, hangul._LOCK, scrubber._LOCK, policy._META_LOCK]
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        for lock in held:
            lock.acquire()
        taken.set()
        release.wait(30)
        for lock in held:
            lock.release()

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(10)
    try:
        pid = os.fork()
        if pid == 0:
            fresh = [analyzer._LOCK, hangul._LOCK, scrubber._LOCK, policy._META_LOCK]
            ok = all(lock.acquire(timeout=2) for lock in fresh)
            os._exit(0 if ok else 1)
        assert _exit_code(pid) == 0, "a lock held at fork was still held in the child"
    finally:
        release.set()
        holder.join()


def _pool_worker(args: tuple[int, int]) -> int:
    from tracelake.sink import live

    (sink,) = live.SINKS  # the parent's sink, started afresh in this process
    worker, n = args
    for i in range(n):
        sink.record({"type": "custom.tick", "i": i}, run_id=f"worker-{worker}")
    return n


def scenario_fork_pool(db_url: str, spool: str) -> None:
    sink = TraceSink(db_url, spool_dir=spool, handle_sigterm=False)
    sizes = [random.randrange(50, 400) for _ in range(6)]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2, maxtasksperchild=2) as pool:
        done = pool.map_async(_pool_worker, list(enumerate(sizes))).get(timeout=120)
        pool.close()
        pool.join()
    sink.close()
    _replay_left(db_url, Path(spool))
    assert done == sizes
    _assert_workers_stored(db_url, sizes)


def test_multiprocessing_fork_workers_store_their_events(db_url: str, tmp_path: Path) -> None:
    """Pool workers leave through os._exit (no atexit): their sinks close through
    multiprocessing's exit hook."""
    _fresh("scenario_fork_pool", db_url, str(tmp_path / "spool"))


def _terminated_worker(args: tuple[str, str, int, int]) -> int:
    from tracelake.sink import live

    url, spool, worker, n = args
    sink = next(iter(live.SINKS), None) or TraceSink(url, spool_dir=spool)
    for i in range(n):
        sink.record({"type": "custom.tick", "i": i}, run_id=f"worker-{worker}")
    return n


def scenario_terminated_pool(db_url: str, spool: str, method: str) -> None:
    sink = TraceSink(db_url, spool_dir=spool, handle_sigterm=True)
    sizes = [random.randrange(50, 300) for _ in range(4)]
    with multiprocessing.get_context(method).Pool(2) as pool:
        args = [(db_url, spool, w, n) for w, n in enumerate(sizes)]
        done = pool.map_async(_terminated_worker, args).get(timeout=120)
    sink.close()
    _replay_left(db_url, Path(spool))
    assert done == sizes
    _assert_workers_stored(db_url, sizes)


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_pool_workers_terminated_on_exit_store_their_events(
    db_url: str, tmp_path: Path, method: str
) -> None:
    """`with Pool() as pool:` terminates the workers (SIGTERM) right after their own exit
    began: the close that exit started finishes before the signal is handed on (an attack
    stored 0 of 1,800 for every start method)."""
    _fresh("scenario_terminated_pool", db_url, str(tmp_path / "spool"), method)


def scenario_sigterm_at_each_step_of_a_close(db_url: str, spool: str) -> None:
    """One sink per instruction of ``close()``: SIGTERM arrives just before that instruction (as
    when ``Pool.terminate()`` strikes while a worker's exit hook closes its sink on the main
    thread). The signal must be handed on (here to the process's own handler, which notes the
    sink's health) once, and only after that sink is closed."""
    health_when_handed_on: list[str] = []
    sinks: list[TraceSink] = []

    def own(_signum: int, _frame: object) -> None:  # the process's SIGTERM handler
        health_when_handed_on.append(sinks[-1].health)

    signal.signal(signal.SIGTERM, own)  # before the sink's, which chains to it
    code, at, seen = TraceSink.close.__code__, -1, 0

    def trace(frame: Any, _event: str, _arg: object) -> Any:
        if frame.f_code is not code:
            return None
        frame.f_trace_opcodes = True
        return step

    def step(_frame: Any, event: str, _arg: object) -> Any:
        nonlocal seen
        if event == "opcode":
            if seen == at:
                signal.raise_signal(signal.SIGTERM)  # handled here, before the instruction
            seen += 1
        return step

    def close_with_sigterm_before(instruction: int) -> None:
        nonlocal at, seen
        sink = TraceSink(db_url, spool_dir=spool, handle_sigterm=True)
        sinks.append(sink)
        for i in range(20):
            sink.record({"type": "custom.tick", "i": i}, run_id=f"step-{instruction}")
        at, seen = instruction, 0
        sys.settrace(trace)
        try:
            sink.close(timeout=30)
        finally:
            sys.settrace(None)

    close_with_sigterm_before(-1)  # no signal: counts the instructions a close runs
    steps = seen
    assert steps > 20 and health_when_handed_on == []
    for instruction in range(steps):
        close_with_sigterm_before(instruction)
        assert health_when_handed_on == ["closed"] * (instruction + 1), (
            f"SIGTERM before instruction {instruction} of the {steps} of close() was handed on "
            f"while the sink was {health_when_handed_on[instruction:]}"
        )
    _replay_left(db_url, Path(spool))
    with _opened(db_url) as store:
        for instruction in range(-1, steps):
            assert _ticks(store, f"step-{instruction}") == list(range(20)), instruction


@pytest.mark.parametrize("backend", ["sqlite"])  # the signal's path is the same on both
def test_sigterm_at_any_step_of_a_close_on_the_main_thread_waits_for_it(
    db_url: str, tmp_path: Path
) -> None:
    """CI: a forkserver worker's events partly missing after ``Pool.terminate()``. A SIGTERM
    whose handler ran after the exit hook's close() had marked the sink closed, but before that
    close counted as one in progress on this thread, made the handler's own close() return at
    once and hand the signal on: the worker died with its queue neither stored nor spooled."""
    _fresh("scenario_sigterm_at_each_step_of_a_close", db_url, str(tmp_path / "spool"))


def scenario_sigterm_while_another_thread_closes(db_url: str, spool: str) -> None:
    """SIGTERM on the main thread while another thread (an application's shutdown thread) is
    inside ``close()``: the handler's own close must wait for that one before the signal is
    handed on (here to the process's own handler, which notes the sink's health)."""
    health_when_handed_on: list[str] = []
    sinks: list[TraceSink] = []

    def own(_signum: int, _frame: object) -> None:  # the process's SIGTERM handler
        health_when_handed_on.append(sinks[0].health)

    signal.signal(signal.SIGTERM, own)  # before the sink's, which chains to it
    sink = TraceSink(db_url, spool_dir=spool, handle_sigterm=True)
    sinks.append(sink)
    for i in range(200):
        sink.record({"type": "custom.tick", "i": i}, run_id="closed-elsewhere")
    started = threading.Event()
    close = sink._close

    def slow_close(timeout: float) -> None:  # the other thread is inside close() for a while
        started.set()
        time.sleep(0.5)
        close(timeout)

    sink._close = slow_close  # type: ignore[method-assign]
    closer = threading.Thread(target=sink.close)
    closer.start()
    assert started.wait(10)
    signal.raise_signal(signal.SIGTERM)
    closer.join(30)
    assert health_when_handed_on == ["closed"], health_when_handed_on
    _replay_left(db_url, Path(spool))
    with _opened(db_url) as store:
        assert _ticks(store, "closed-elsewhere") == list(range(200))


@pytest.mark.parametrize("backend", ["sqlite"])  # the signal's path is the same on both
def test_sigterm_while_another_thread_closes_waits_for_that_close(
    db_url: str, tmp_path: Path
) -> None:
    """Found by the review of the fix above: a SIGTERM handler that found the sink closed by
    another thread returned at once and handed the signal on mid-close."""
    _fresh("scenario_sigterm_while_another_thread_closes", db_url, str(tmp_path / "spool"))
