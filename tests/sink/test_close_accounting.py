"""Every event record() accepted is accounted for when close() cannot wait for it: stored,
spooled, or counted as dropped (with a log line), never gone without a trace.

Found by an attack on the sink: close(timeout) running out while the writer was inside a slow
``to_dict()`` lost that batch uncounted, and producers waiting for room in a full queue when
close() ran lost their events uncounted.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tracelake.sink import TraceSink


class Slow:
    """An event whose to_dict() takes a while (an adapter that reads a remote object)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def to_dict(self) -> dict[str, Any]:
        time.sleep(self.seconds)
        return {"type": "custom.slow"}


def _accounted(stats: dict[str, Any]) -> int:
    return int(stats["written"] + stats["spooled"] + stats["quarantined"] + stats["dropped"])


def test_close_running_out_inside_a_batch_counts_it(
    db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="tracelake.sink")
    sink = TraceSink(
        db_url, spool_dir=tmp_path / "spool", scrub_process=False, handle_sigterm=False
    )
    sink.record({"type": "custom.warm"}, run_id="warm")
    assert sink.flush(60)
    n = random.randrange(50, 400)
    sink.record(Slow(4.0), run_id="slow")
    for i in range(n):
        sink.record({"type": "custom.tick", "i": i}, run_id="slow")
    time.sleep(0.3)  # the writer has taken the batch and sits in to_dict()
    sink.close(timeout=1.0)
    stats = sink.stats()
    assert stats["recorded"] == n + 2
    assert stats["dropped"] >= 1, stats
    assert _accounted(stats) == stats["recorded"], stats
    assert any("ran out of time" in r.getMessage() for r in caplog.records)


def test_producers_waiting_for_room_when_close_runs_are_counted(
    db_url: str, tmp_path: Path
) -> None:
    sink = TraceSink(
        db_url,
        spool_dir=tmp_path / "spool",
        scrub_process=False,
        handle_sigterm=False,
        max_queue=20,
        batch_size=5,
    )
    sink.record(Slow(3.0), run_id="stuck")  # the writer is stuck: the queue fills
    time.sleep(0.2)
    accepted = [0] * 4

    def produce(k: int) -> None:
        for i in range(50):
            sink.record({"type": "custom.tick", "i": i}, run_id=f"p{k}")
            accepted[k] += 1

    producers = [threading.Thread(target=produce, args=(k,)) for k in range(4)]
    for p in producers:
        p.start()
    time.sleep(0.5)  # they wait in record() for room
    sink.close(timeout=0.5)
    for p in producers:
        p.join(10)
        assert not p.is_alive(), "record() kept waiting after close()"
    stats = sink.stats()
    assert stats["recorded"] + stats["dropped_after_close"] == 1 + sum(accepted), stats
    assert stats["dropped_after_close"] > 0, stats
    assert _accounted(stats) == stats["recorded"] + stats["dropped_after_close"], stats
