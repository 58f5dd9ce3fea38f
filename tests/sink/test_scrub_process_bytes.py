"""The sink's scrubber process keeps waiting batches as bytes, never as the runner's objects.

A burst that waits for the process (it is slower than a fast runner, or stopped) must not hold
the runner's event objects: a queue of live objects is walked by every garbage collection of the
runner's process (a full one took ~100 ms with the queue of one 12,000-event burst; BENCHMARKS).
And a batch kept as bytes must still load again here when the process cannot take it, or be
quarantined with its reason, never dropped silently.

Real parts: a real child process the tests SIGSTOP, SQLite and PostgreSQL.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import os
import pickle
import signal
import sys
import time
import weakref
from dataclasses import dataclass, make_dataclass
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any

import pydantic
import pytest

from tests.sink.test_scrub_process import _process, _started
from tracelake.runners import to_jsonable
from tracelake.sink import pickling
from tracelake.sink.preparer import Item
from tracelake.store import Store


@dataclass
class Tick:
    type: str
    i: int
    note: str


class Mood(Enum):
    CALM = "calm"


@dataclass(slots=True, frozen=True)
class FrozenSlots:  # dataclasses give it __getstate__/__setstate__ of its own
    type: str


class OwnReduce:
    def __init__(self, type_: str) -> None:
        self.type = type_

    def __reduce__(self) -> tuple[Any, ...]:
        return (_refuse, (self.type,))


def _refuse(type_: str) -> None:
    raise RuntimeError("this pickle runs code of the runner's when it is loaded")


class Model(pydantic.BaseModel):
    type: str


def test_classes_whose_pickle_runs_their_own_code_go_as_snapshots() -> None:
    how = pickling._how
    assert how(Tick) == "reference"  # a plain dataclass: __new__ and its __dict__
    assert how(Mood) == "snapshot"  # an enum of the runner's defines __new__ (and may reduce)
    assert how(datetime.datetime) == how(Decimal) == "reference"  # the standard library's
    assert how(FrozenSlots) == "snapshot"
    assert how(OwnReduce) == "snapshot"
    assert how(Model) == "snapshot"
    # and such an object is sent as what the process would have made of it
    own = OwnReduce("custom.own")
    items: list[Item] = [
        (own, "r", 1.0, None),
        (Model(type="custom.model"), "r", 1.0, None),
    ]
    loaded = pickle.loads(pickling.dumps(items, 32))  # no RuntimeError from _refuse
    assert loaded[0][0] == to_jsonable(own, 32) and isinstance(loaded[0][0], str)
    assert loaded[1][0] == {"type": "custom.model"}


def _wait(what: Any, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(0.01)
    return False


def test_a_burst_waiting_for_a_stopped_process_holds_no_runner_object(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    sink = _started(db_url, tmp_path / "spool", batch_size=100)
    off = _process(sink)
    os.kill(off.pid, signal.SIGSTOP)
    try:
        ticks = [Tick("custom.tick", i, f"tick {i}") for i in range(5000)]
        refs = [weakref.ref(t) for t in ticks]
        for t in ticks:
            sink.record(t, run_id="burst")
        del ticks, t
        # The writer pickles what is queued within a quarter of the flush interval: the queue
        # empties while the process is stopped, and no tick is alive any more.
        assert _wait(lambda: not sink._queue and not gc.collect() and not any(r() for r in refs))
        assert off.outstanding and off.dead is None
        held = [b for b in off._batches.values() if b.payload is not None and b.items is None]
        assert len(held) == len(off._batches) and sum(b.size for b in held) == 5000
    finally:
        os.kill(off.pid, signal.SIGCONT)
    assert sink.flush(60)
    sink.close()
    stored = [(e.payload["i"], e.payload["note"]) for e in store.run_events("burst")]
    assert stored == [(i, f"tick {i}") for i in range(5000)]


def test_a_batch_the_process_cannot_load_is_prepared_here_or_quarantined(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    """A class that exists only in the runner's process (set on a module at run time): the
    process cannot load the batch, so it is loaded and prepared here. If it does not load here
    either (the class was taken away meanwhile), each of its events is quarantined and counted."""
    module = sys.modules[__name__]
    made = [make_dataclass("OnlyHere", [("type", str), ("i", int)])]
    made[0].__module__ = __name__
    module.OnlyHere = made[0]  # type: ignore[attr-defined]
    sink = _started(db_url, tmp_path / "spool", batch_size=10)
    off = _process(sink)
    try:
        for i in range(10):
            event = made[0]("custom.here", i)
            sink.record(event, run_id="here")
        assert sink.flush(60)
        assert [e.payload["i"] for e in store.run_events("here")] == list(range(10))
        assert off.dead is None  # a batch it cannot load does not stop the process

        os.kill(off.pid, signal.SIGSTOP)
        try:
            for i in range(10):
                event = made[0]("custom.gone", i)
                sink.record(event, run_id="gone")
            del event
            assert _wait(lambda: not sink._queue and off.outstanding)
            delattr(module, "OnlyHere")  # now it loads nowhere
        finally:
            os.kill(off.pid, signal.SIGCONT)
        assert sink.flush(60)
        stats = sink.stats()
    finally:
        with contextlib.suppress(AttributeError):
            delattr(module, "OnlyHere")
        sink.close()
    assert list(store.run_events("gone")) == []
    assert stats["quarantined"] == 10 and stats["dropped"] == 0
    assert store.stats()["quarantined_by_reason"] == {"unreadable_event": 10}


@pytest.fixture(autouse=True)
def _no_leftover_class() -> Any:
    yield
    with contextlib.suppress(AttributeError):
        delattr(sys.modules[__name__], "OnlyHere")
