"""The sink's scrubber process: same events as the writer thread makes, nothing lost or
reordered when the process dies, hangs or cannot take an object, and the runner never waits.

Real parts: the real graph-tool-call PlanRunner with Faker-made customers (fresh seed each
run), a real child process that the tests SIGKILL and SIGSTOP, SQLite and PostgreSQL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from tests.corpora.gtc_commerce import iter_gtc_runs
from tests.corpora.realistic import FakePeople
from tracelake.sink import TraceSink, offload
from tracelake.store import Store


def _runs(n: int, seed: int) -> Iterator[tuple[str, list[Any]]]:
    people = FakePeople(seed)
    for i, (_s, runner, plan, ctx, meta, _p) in enumerate(iter_gtc_runs(n, seed, person=people)):
        yield (
            f"run-{seed}-{i}",
            list(runner.run_stream(plan, input_context=ctx, trace_metadata=meta)),
        )


def _started(url: str, spool: Path, **kw: Any) -> TraceSink:
    sink = TraceSink(url, spool_dir=spool, flush_interval=0.01, scrub_process=True, **kw)
    assert sink.wait_until_ready(120), "the scrubber process did not start"
    assert sink.stats()["scrub_process"] == "running"
    return sink


def _process(sink: TraceSink) -> offload.ScrubProcess:
    off = sink._writer.offload
    assert off is not None
    return off


def _stored(store: Store, after: int = 0) -> list[tuple[str, Any, Any]]:
    return [(e.type, e.payload, e.redactions) for e in store.iter_all(after=after)]


class Colour(Enum):
    RED = "red"


def test_the_process_stores_exactly_what_the_writer_thread_stores(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    seed = random.randrange(1 << 30)
    runs = list(_runs(6, seed))

    @dataclass
    class Local:  # defined in a function: the process cannot import it (sent as a snapshot)
        type: str
        note: str
        colour: Colour

    extra = [
        Local("custom.note", f"call {seed} back", Colour.RED),
        {"type": "custom.lock", "held": threading.Lock()},  # does not pickle at all
    ]
    by_process = _started(db_url, tmp_path / "a")
    for run_id, events in runs:
        for _e in by_process.tap(iter(events + extra), run_id=run_id):
            pass
    assert by_process.flush(60)
    answered = _process(by_process).answered
    by_process.close()
    first = _stored(store)
    last = max(e.position for e in store.iter_all())

    by_thread = TraceSink(db_url, spool_dir=tmp_path / "b", scrub_process=False)
    for run_id, events in runs:
        for _e in by_thread.tap(iter(events + extra), run_id=run_id):
            pass
    by_thread.close()
    second = _stored(store, after=last)
    assert answered > 0, f"seed {seed}: no batch went through the process"
    assert len(first) == sum(len(ev) + len(extra) for _, ev in runs), f"seed {seed}"
    assert first == second, f"seed {seed}"


def test_a_killed_process_loses_nothing_and_keeps_each_run_in_order(
    db_url: str, store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tracelake.sink")
    sink = _started(db_url, tmp_path / "spool", batch_size=50)
    off = _process(sink)
    n_runs, per_run = 40, 120
    killed = False
    for i in range(per_run):
        for r in range(n_runs):
            sink.record(
                {"type": "custom.tick", "i": i, "text": f"run {r} tick {i}"}, run_id=f"r{r}"
            )
        if i == 20:
            os.kill(off.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.001)
    assert killed
    assert sink.flush(120)
    stats = sink.stats()
    sink.close()
    assert stats["scrub_process"] == "off" and stats["dropped"] == 0
    assert any("scrubber process" in r.getMessage() for r in caplog.records)
    for r in range(n_runs):
        ticks = [e.payload["i"] for e in store.run_events(f"r{r}")]
        assert ticks == list(range(per_run)), f"run r{r}"


def test_a_hung_process_is_killed_and_its_batches_prepared_here(
    db_url: str, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(offload, "HUNG_AFTER", 1.0)
    sink = _started(db_url, tmp_path / "spool", batch_size=50)
    off = _process(sink)
    os.kill(off.pid, signal.SIGSTOP)
    try:
        worst = 0.0
        for i in range(3000):
            t = time.perf_counter()
            sink.record({"type": "custom.tick", "i": i}, run_id="hung")
            worst = max(worst, time.perf_counter() - t)
            if i % 100 == 99:
                time.sleep(0.01)
        assert sink.flush(60)
    finally:
        with contextlib.suppress(ProcessLookupError):  # killed and reaped by the sink
            os.kill(off.pid, signal.SIGCONT)
    stats = sink.stats()
    sink.close()
    # Timings are the benchmark's (bench/bench_sink.py), never asserted: in a full suite a
    # garbage collection pauses every thread for hundreds of ms (CI: 273 ms once).
    print(f"worst record() while the scrubber process hung: {worst * 1000:.1f} ms")
    assert off.dead is not None and "answer" in off.dead
    assert stats["scrub_process"] == "off"
    assert [e.payload["i"] for e in store.run_events("hung")] == list(range(3000))


def test_the_process_ends_with_the_sink_and_with_its_parent(db_url: str, tmp_path: Path) -> None:
    sink = _started(db_url, tmp_path / "spool")
    pid = _process(sink).pid
    sink.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: gone, not a zombie


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"  # a zombie has exited (reparented: its reaper may be slow)


def test_the_process_exits_when_the_runner_is_killed(tmp_path: Path) -> None:
    """SIGKILL of the runner's process mid-stream: the scrubber process sees its input end and
    exits by itself (no orphan keeps raw events in memory)."""
    code = (
        "import sys, time\n"
        "from tracelake.sink import TraceSink\n"
        f"sink = TraceSink({f'sqlite:///{tmp_path}/k.db'!r}, spool_dir={str(tmp_path / 's')!r},"
        " scrub_process=True)\n"
        "assert sink.wait_until_ready(120)\n"
        "print(sink._writer.offload.pid, flush=True)\n"
        "for i in range(200000):\n"
        "    sink.record({'type': 'custom.tick', 'i': i}, run_id='k')\n"
        "time.sleep(120)\n"
    )
    runner = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    assert runner.stdout is not None
    pid = int(runner.stdout.readline())
    time.sleep(0.5)  # mid-stream: batches in flight
    runner.kill()
    runner.wait()
    runner.stdout.close()
    deadline = time.monotonic() + 20
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the scrubber process outlived the runner"
