"""The sink with the real PlanRunner and agentlane-shaped async streams, on both backends."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_agentlane_samples
from tests.corpora.gtc_commerce import all_planted, iter_gtc_runs
from tests.ingest.test_no_secret_on_disk import forms, full_dump
from tracelake.demo import run_scenario, scenarios
from tracelake.sink import TraceSink
from tracelake.store import Store

TIMING = {"duration_ms", "total_duration_ms"}


def untimed(value: Any) -> Any:
    """Events minus wall-clock durations (the only thing that may differ between two runs)."""
    if isinstance(value, dict):
        return {k: (0 if k in TIMING else untimed(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


@pytest.fixture
def sink(db_url: str, tmp_path: Path) -> Iterator[TraceSink]:
    s = TraceSink(db_url, spool_dir=tmp_path / "spool", flush_interval=0.01)
    yield s
    s.close()


def test_plan_runner_behaves_the_same_and_every_event_is_stored_once(
    sink: TraceSink, store: Store
) -> None:
    expected: dict[str, list[dict[str, Any]]] = {}
    for s in scenarios():
        plain = [asdict(e) for e in run_scenario(s)]
        seen = [asdict(e) for e in sink.tap(run_scenario(s), run_id=f"ql-run-{s.name}")]
        assert untimed(seen) == untimed(plain)  # same events, same outputs, same order
        expected[f"ql-run-{s.name}"] = plain
    sink.close()
    stats = sink.stats()
    total = sum(len(v) for v in expected.values())
    assert (stats["recorded"], stats["written"], stats["dropped"]) == (total, total, 0)
    for run_id, plain in expected.items():
        stored = store.run_events(run_id)
        assert [e.type for e in stored] == [e["type"] for e in plain]
        assert [e.seq for e in stored] == list(range(1, len(plain) + 1))
        assert len({e.event_id for e in stored}) == len(stored)
    assert store.stats()["events"] == total


def test_callers_objects_are_never_mutated_and_nothing_planted_reaches_disk(
    sink: TraceSink, store: Store
) -> None:
    planted: set[str] = set()
    snapshots: list[tuple[Any, dict[str, Any]]] = []
    for _name, runner, plan, ctx, meta, person in iter_gtc_runs(runs=2):
        meta_before = copy.deepcopy(meta)
        for event in sink.tap(
            runner.run_stream(plan, input_context=ctx, trace_metadata=meta),
            trace_metadata={"collection_id": "orders-api", "tenant": "acme"},
        ):
            snapshots.append((event, copy.deepcopy(asdict(event))))
        assert meta == meta_before
        planted.update(v for v in person.values() if isinstance(v, str) and len(v) >= 6)
    sink.close()
    for event, before in snapshots:
        assert asdict(event) == before  # the sink never touched the live objects
        assert "tenant" not in event.trace_metadata  # nor injected its metadata into them
    stored = list(store.iter_all())
    assert len(stored) == len(snapshots)
    assert all(e.payload.get("trace_metadata", {}).get("tenant") == "acme" for e in stored)
    dump = full_dump(store)
    from tests.corpora.gtc_commerce import build_gtc_corpus

    values = sorted(planted | set(all_planted(build_gtc_corpus(runs=2)[1])))
    assert [v for v in values if any(f in dump for f in forms(v))] == []


def _agentlane_runs() -> list[list[dict[str, Any]]]:
    path = require_agentlane_samples() / "events.jsonl"
    runs: list[list[dict[str, Any]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["type"] == "agent_start" and event["payload"]["is_root"]:
            runs.append([])
        runs[-1].append(event)
    return runs


class RunEvent:
    """Stands in for agentlane's RunEvent objects (agentlane itself needs Python 3.12)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def to_dict(self) -> dict[str, Any]:
        return self._data


async def stream(events: list[dict[str, Any]]) -> AsyncIterator[RunEvent]:
    for e in events:
        await asyncio.sleep(0)
        yield RunEvent(e)


def test_agentlane_async_streams(sink: TraceSink, store: Store) -> None:
    runs = _agentlane_runs()

    async def main() -> int:
        n = 0
        for i, run in enumerate(runs):
            async for _event in sink.atap(stream(run), run_id=f"agent-run-{i:02d}"):
                n += 1
        return n

    total = asyncio.run(main())
    sink.close()
    assert total == 832 and len(runs) == 12
    for i, run in enumerate(runs):
        stored = store.run_events(f"agent-run-{i:02d}")
        assert [e.type for e in stored] == [e["type"] for e in run]


def test_bare_records_split_into_runs_at_each_root_agent_start(
    sink: TraceSink, store: Store
) -> None:
    runs = _agentlane_runs()
    for run in runs:
        for event in run:
            sink.record(event)
    sink.close()
    assert store.stats()["runs"] == 12


def test_record_never_raises_and_bad_events_are_quarantined(sink: TraceSink, store: Store) -> None:
    cyclic: dict[str, Any] = {"type": "x"}
    cyclic["self"] = cyclic
    sink.record(object(), run_id="r")
    sink.record(cyclic, run_id="r")
    sink.record({"no": "type"}, run_id="r")
    sink.record({"type": "step.started", "stage": "runner", "step_id": "s1"}, run_id="r")
    sink.close()
    stats = sink.stats()
    assert (stats["quarantined"], stats["written"], stats["dropped"]) == (3, 1, 0)
    assert store.stats()["quarantined_by_reason"] == {
        "missing_type": 1,
        "not_an_object": 1,
        "too_deep": 1,
    }


def test_gc_freeze_builds_the_engine_and_freezes_what_is_loaded(
    db_url: str, tmp_path: Path
) -> None:
    import gc

    try:
        with TraceSink(db_url, spool_dir=tmp_path / "spool", gc_freeze=True) as sink:
            assert gc.get_freeze_count() > 10_000  # the engine's long-lived objects
            sink.record({"type": "x.y"}, run_id="r")
        assert sink.stats()["written"] == 1
    finally:
        gc.unfreeze()


def test_a_full_queue_waits_and_spools_never_drops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database is unreachable and the queue holds 5 events: 300 records all reach the spool."""
    from tracelake.sink.spool import status

    monkeypatch.setenv("TRACELAKE_PSEUDONYM_KEY", "k" * 32)
    sink = TraceSink(
        "postgresql://postgres@127.0.0.1:9/unreachable",
        spool_dir=tmp_path / "spool",
        max_queue=5,
        flush_interval=0.001,
    )
    for i in range(300):
        sink.record({"type": "step.completed", "i": i}, run_id="r")
    sink.close()
    stats = sink.stats()
    assert (stats["recorded"], stats["spooled"], stats["dropped"], stats["written"]) == (
        300,
        300,
        0,
        0,
    )
    assert status(tmp_path / "spool")["events"] == 300
