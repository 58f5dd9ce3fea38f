"""The sink under hostile events and a failing disk (review findings), on both backends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tracelake.sink import TraceSink
from tracelake.sink.spool import Spool, status
from tracelake.sink.writer import replay
from tracelake.store import NewEvent, QuarantineItem, Store


@pytest.fixture
def sink(db_url: str, tmp_path: Path) -> Iterator[TraceSink]:
    s = TraceSink(db_url, spool_dir=tmp_path / "spool", flush_interval=0.01)
    yield s
    s.close()


class Unreadable:
    def to_dict(self) -> dict[str, Any]:
        raise KeyError("payload")


class BadStr:
    def __str__(self) -> str:
        raise ValueError("cannot render")


def test_one_unreadable_event_is_quarantined_alone(sink: TraceSink, store: Store) -> None:
    good = {"type": "step.started", "stage": "runner", "step_id": "s1"}
    sink.record(good, run_id="r")
    sink.record(Unreadable(), run_id="r")
    sink.record({"type": "x", "v": BadStr()}, run_id="r")
    sink.record({"type": "x", "text": "nul\u0000 and lone \ud800 surrogate"}, run_id="r")
    sink.record(good, run_id="r")
    sink.close()
    stats = sink.stats()
    assert (stats["written"], stats["quarantined"], stats["dropped"], stats["errors"]) == (
        3,
        2,
        0,
        0,
    )
    assert store.stats()["quarantined_by_reason"] == {"unreadable_event": 2}
    assert [e.seq for e in store.run_events("r")] == [1, 2, 3]


def test_quarantine_records_of_different_processes_do_not_collapse(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    cyclic: dict[str, Any] = {"type": "x"}
    cyclic["self"] = cyclic
    for i in range(3):  # three sink lifetimes, as three processes would be
        with TraceSink(db_url, spool_dir=tmp_path / f"spool{i}") as s:
            s.record(cyclic, run_id="worker")
    assert store.stats()["quarantined_by_reason"] == {"too_deep": 3}


def test_a_spool_that_cannot_be_written_does_not_lose_events(
    sink: TraceSink, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk is simulated by making the spool's write raise ENOSPC (a real full disk
    cannot be made here without root-only tricks); the database is up and takes everything."""

    def full(*_args: object, **_kw: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sink.spool, "append", full)
    for i in range(50):
        sink.record({"type": "step.completed", "i": i}, run_id="r")
    assert sink.flush(10)
    assert sink.stats()["written"] == 50 and sink.stats()["dropped"] == 0
    assert len(store.run_events("r")) == 50


def ev(i: int) -> NewEvent:
    return NewEvent(
        run_id="r",
        seq=None,
        type="x",
        source="unknown",
        payload={"type": "x", "i": i},
        recorded_at=datetime.now(UTC),
        event_id=f"e{i}",
    )


def test_a_short_write_leaves_no_torn_record(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = Spool(tmp_path / "spool")
    spool.open()
    spool.append("events", [ev(1)])
    real_write = os.write
    calls = {"n": 0}

    def short_then_full(fd: int, data: Any) -> int:  # the disk fills in the middle of a record
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("tracelake.sink.spool.os.write", short_then_full)
    with pytest.raises(OSError):
        spool.append("events", [ev(2)])
    monkeypatch.setattr("tracelake.sink.spool.os.write", real_write)
    spool.append("events", [ev(3)])  # space is back
    spool.close()
    done = replay(Spool(tmp_path / "spool"), store)
    assert (done.appended, done.corrupt) == (2, 0)
    assert [e.event_id for e in store.run_events("r")] == ["e1", "e3"]


def test_a_damaged_segment_is_set_aside_not_deleted(store: Store, tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    spool.open()
    for i in range(3):
        spool.append("events", [ev(i)])
    spool.close()
    (segment,) = (tmp_path / "spool").glob("*/seg-*.jsonl")
    lines = segment.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"i":1', b'"i":7')  # a flipped byte: checksum mismatch
    segment.write_bytes(b"".join(lines))
    done = replay(Spool(tmp_path / "spool"), store)
    assert (done.appended, done.corrupt) == (1, 1)
    assert status(tmp_path / "spool")["corrupt"] == 1  # kept for an operator


def test_when_disk_and_database_both_refuse_batches_wait_then_drop_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No database and a spool that cannot be written (simulated ENOSPC): batches wait in
    memory and are spooled once the disk is back; only what is still refused when close()
    gives up counts as dropped, and is said in a log line."""
    from tracelake.sink import spool as spool_module

    monkeypatch.setenv("TRACELAKE_PSEUDONYM_KEY", "k" * 32)
    url = "postgresql://postgres@127.0.0.1:9/unreachable"
    real_append = spool_module.Spool.append

    def full(self: Spool, *args: Any, **kw: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spool_module.Spool, "append", full)
    sink = TraceSink(url, spool_dir=tmp_path / "spool", flush_interval=0.01, retry_max=0.05)
    for i in range(20):
        sink.record({"type": "x", "i": i}, run_id="r")
    assert not sink.flush(0.5)  # nothing is durable yet: the batch waits in memory
    monkeypatch.setattr(spool_module.Spool, "append", real_append)  # the disk is back
    assert sink.flush(10)
    assert sink.stats()["spooled"] == 20
    monkeypatch.setattr(spool_module.Spool, "append", full)  # and full again
    for i in range(5):
        sink.record({"type": "x", "i": 100 + i}, run_id="r")
    sink.close(timeout=0.5)
    stats = sink.stats()
    assert (stats["spooled"], stats["dropped"]) == (20, 5)
    monkeypatch.setattr(spool_module.Spool, "append", real_append)
    assert status(tmp_path / "spool")["events"] == 20


def test_a_replayed_quarantine_row_is_counted_once(sink: TraceSink, store: Store) -> None:
    """A quarantine row appended live and replayed again from the spool after an outage is
    one row in the database and one in stats()."""
    sink.record(Unreadable(), run_id="q")
    assert sink.flush(10)
    assert sink.stats()["quarantined"] == 1
    bad = sink._writer.preparer.prepare([(Unreadable(), "q", 1.0, None)])[1]
    sink._shipper._append([], bad, live=True)  # a new row, appended live
    sink._shipper._append([], bad, live=False)  # the same row replayed after an outage
    assert sink.stats()["quarantined"] == 2
    assert store.stats()["quarantined"] == 2


def test_replay_merges_event_batches_in_order_around_quarantine_records(tmp_path: Path) -> None:
    from tracelake.sink.spool import SpoolRecord

    spool = Spool(tmp_path / "spool")
    spool.open()
    spool.append("events", [ev(1), ev(2)])
    spool.append("events", [ev(3)])
    bad = QuarantineItem(
        origin="sink", reason="x", detail="d", recorded_at=datetime.now(UTC), dedupe_key="k1"
    )
    spool.append("quarantine", [bad])
    spool.append("events", [ev(4), ev(5), ev(6)])
    spool.append("events", [ev(7)])
    segment = spool.current
    spool.seal()
    assert segment is not None
    out: list[SpoolRecord] = list(Spool.read_merged(segment, max_events=3))
    shape = [
        (r.kind, [e.payload["i"] for e in r.items] if r.kind == "events" else len(r.items))  # type: ignore[union-attr]
        for r in out
    ]
    assert shape == [
        ("events", [1, 2, 3]),
        ("quarantine", 1),
        ("events", [4, 5, 6]),
        ("events", [7]),
    ]
