"""Ingest end to end on both backends: real PlanRunner events and agentlane samples."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

from tests.ingest.helpers import agentlane_bytes, gtc_runs, ingest_bytes, jsonl
from tracelake.store import Store, StoredEvent


def runs_of(store: Store) -> dict[str, list[StoredEvent]]:
    runs: dict[str, list[StoredEvent]] = defaultdict(list)
    for e in store.iter_all():
        runs[e.run_id].append(e)
    return runs


def test_bare_graph_tool_call_stream_is_stored_once_in_stream_order(store: Store) -> None:
    runs = gtc_runs()
    data = jsonl([e for run in runs for e in run])
    report = ingest_bytes(store, data)
    total = sum(len(r) for r in runs)
    assert (report.events, report.appended, report.quarantined_total) == (total, total, 0)
    stored = runs_of(store)
    assert len(stored) == len(runs)
    # runs come back in input order (global position), each with seq 1..n in stream order
    ordered = sorted(stored.values(), key=lambda evs: evs[0].position)
    for expected, got in zip(runs, ordered, strict=True):
        assert [e.seq for e in got] == list(range(1, len(expected) + 1))
        assert [e.type for e in got] == [e["type"] for e in expected]
        assert [e.plan_id for e in got] == [e["plan_id"] for e in expected]
        assert got[0].run_id.startswith("run-")
        assert got[0].collection_id == "orders-api"
    again = ingest_bytes(store, data)
    assert (again.appended, again.duplicates) == (0, total)
    assert store.stats()["events"] == total


def test_a_run_keeps_its_identity_across_plan_repaired(store: Store) -> None:
    repaired = next(r for r in gtc_runs() if any(e["type"] == "plan.repaired" for e in r))
    ingest_bytes(store, jsonl(repaired))
    (run,) = runs_of(store).values()
    assert {e.plan_id for e in run} == {"plan-repaired", "plan-repaired-r1"}
    assert run[-1].type == "plan.completed"


def test_same_plan_id_in_many_runs_gives_many_runs(store: Store) -> None:
    one = gtc_runs()[0]
    other = [dict(e, trace_metadata={**e["trace_metadata"], "case_id": "second"}) for e in one]
    report = ingest_bytes(store, jsonl(one + other))
    assert len(report.runs) == 2
    assert {e.plan_id for e in store.iter_all()} == {one[0]["plan_id"]}


def test_envelopes_use_their_run_id_and_mix_with_gzip(store: Store) -> None:
    runs = gtc_runs()
    lines = [
        {"type": "runner.event", "run_id": f"ql-run-20260725-{i:03d}", "event": e}
        for i, run in enumerate(runs[:3], 1)
        for e in run
    ]
    data = gzip.compress(jsonl(lines))
    report = ingest_bytes(store, data, origin="runs.jsonl.gz")
    assert report.appended == len(lines)
    stored = runs_of(store)
    assert sorted(stored) == ["ql-run-20260725-001", "ql-run-20260725-002", "ql-run-20260725-003"]
    assert [e.seq for e in stored["ql-run-20260725-002"]] == list(range(1, len(runs[1]) + 1))
    assert ingest_bytes(store, data).appended == 0


def test_agentlane_samples_are_stored_once_per_root_run(store: Store) -> None:
    data = agentlane_bytes()
    lines = [json.loads(line) for line in data.splitlines()]
    report = ingest_bytes(store, data)
    assert (report.appended, report.quarantined_total, report.scrub_failed) == (len(lines), 0, 0)
    stored = runs_of(store)
    assert len(stored) == 12
    flat = [e for evs in sorted(stored.values(), key=lambda v: v[0].position) for e in evs]
    assert [e.type for e in flat] == [line["type"] for line in lines]
    for evs in stored.values():
        assert evs[0].type == "agent_start" and evs[0].payload["payload"]["is_root"] is True
        assert [e.seq for e in evs] == list(range(1, len(evs) + 1))
    tools = {e.tool for e in flat if e.type == "tool_start"}
    assert "lookup_customer" in tools
    assert ingest_bytes(store, data).appended == 0


def test_bad_lines_are_quarantined_and_good_lines_after_them_are_stored(store: Store) -> None:
    good = gtc_runs()[1]
    deep = b'{"type": "x", "n": ' + b'{"a": ' * 80 + b"1" + b"}" * 80 + b"}"
    bad = [
        b"this is not json but has a token Bearer abcdefghijklmnopqrstuvwxyz012345",
        b"[1, 2, 3]",
        b'{"no_type": true, "email": "kim.seoyeon@example.com"}',
        b'{"type": "plan.started", "stage": "runner", "step_count": "lots"}',
        b'{"type": "step.completed", "duration_ms": NaN}',
        b'{"type": "step.completed", "output_size": Infinity}',
        b'{"type": "x", "v": "\xff\xfe"}',
        b'{"type": "x", "pad": "' + b"a" * 5000 + b'"}',
        deep,
    ]
    lines = [json.dumps(good[0]).encode(), *bad, *(json.dumps(e).encode() for e in good[1:])]
    report = ingest_bytes(store, b"\n".join(lines) + b"\n", origin="bad.jsonl", max_line_bytes=4096)
    assert report.appended == len(good)
    assert dict(report.quarantined) == {
        "not_json": 1,
        "not_an_object": 1,
        "missing_type": 1,
        "contract_violation": 1,
        "non_finite_number": 2,
        "invalid_utf8": 1,
        "line_too_long": 1,
        "too_deep": 1,
    }
    with store.reading() as conn:
        rows = conn.exec_driver_sql(
            "SELECT origin, line_no, reason, detail, preview FROM quarantine ORDER BY line_no"
        ).all()
    assert [r.line_no for r in rows] == list(range(2, 2 + len(bad)))
    assert {r.origin for r in rows} == {"bad.jsonl"}
    dump = "\n".join(str(tuple(r)) for r in rows)
    assert "abcdefghijklmnopqrstuvwxyz012345" not in dump  # previews are scrubbed
    assert "kim.seoyeon@example.com" not in dump
    # the same bad input again quarantines nothing new and appends nothing
    again = ingest_bytes(store, b"\n".join(lines) + b"\n", origin="bad.jsonl", max_line_bytes=4096)
    assert again.appended == 0
    assert store.stats()["quarantined"] == len(bad)


def test_a_failing_scrubber_stores_a_minimal_record_never_the_raw_event(store: Store) -> None:
    """Fail closed: the event is kept (type, run, seq) without its payload."""
    import io

    from tracelake.config import Settings
    from tracelake.ingest import Ingestor
    from tracelake.scrub import get_scrubber, load_pseudonym_key

    key = load_pseudonym_key(store.url)
    real = get_scrubber(key)

    class Exploding:
        def scrub_event(self, source: str, event_type: str, event: dict) -> object:  # type: ignore[type-arg]
            if event_type == "step.started":
                raise RuntimeError(f"boom near {event.get('args_resolved')}")
            return real.scrub_event(source, event_type, event)

        def scrub_text(self, text: str, max_len: int = 500) -> str:
            return real.scrub_text(text, max_len=max_len)

    run = [dict(e) for e in gtc_runs()[0]]
    started = next(e for e in run if e["type"] == "step.started")
    started["args_resolved"] = {"email": "kim.seoyeon@example.com"}
    ingestor = Ingestor(store, Exploding(), key, Settings(database_url=store.url))  # type: ignore[arg-type]
    report = ingestor.ingest(io.BufferedReader(io.BytesIO(jsonl(run))), "x.jsonl")
    n_started = sum(e["type"] == "step.started" for e in run)
    assert report.appended == len(run) and report.scrub_failed == n_started
    stored = list(store.iter_all())
    minimal = [e for e in stored if e.type == "step.started"]
    assert [(e.payload, store.redaction_report(e.redactions)) for e in minimal] == [
        ({"type": "step.started", "scrub_failed": True}, {"failed": "scrub_failed"})
    ] * n_started
    assert [e.seq for e in stored] == list(range(1, len(run) + 1))  # type, run and seq kept
    assert all("kim.seoyeon" not in json.dumps(e.payload) for e in stored)
