"""Migration 0009: trace_metadata stored once per distinct object, read back in place; the
downgrade puts it back into the events and the chain still verifies (both backends)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from tests.ingest.helpers import gtc_runs, ingest_bytes, jsonl
from tracelake.lifecycle.verify import verify
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import NewEvent, Store


def _count(store: Store, sql: str) -> int:
    with store.reading() as conn:
        return int(conn.execute(sa.text(sql)).scalar() or 0)


def test_trace_metadata_is_interned_and_read_back_whole(store: Store) -> None:
    events = [e for run in gtc_runs() for e in run]
    assert all(e.get("trace_metadata") for e in events)
    ingest_bytes(store, jsonl(events))
    key = load_pseudonym_key(store.url)
    scrubber = get_scrubber(key)
    expected = [scrubber.scrub_event("graph_tool_call", e["type"], e).payload for e in events]
    stored = list(store.iter_all())
    assert [e.payload for e in stored] == expected
    assert all(set(e.redactions or {"r": 0}) == {"r"} for e in stored)  # "t" stays inside
    runs = len(gtc_runs())
    assert 0 < _count(store, "SELECT count(*) FROM trace_contexts") <= runs
    if store.dialect == "postgresql":
        inline = "SELECT count(*) FROM events WHERE payload ? 'trace_metadata'"
    else:
        inline = "SELECT count(*) FROM events WHERE json_extract(payload, '$.trace_metadata') IS NOT NULL"
    assert _count(store, inline) == 0
    # re-ingest: every event is recognised (the hash is over the whole payload)
    again = ingest_bytes(store, jsonl(events))
    assert (again.appended, again.duplicates) == (0, len(events))
    # a NewEvent (sink, promotion) gets the same treatment from the appender
    meta = {"collection_id": "c", "request_id": "r-1"}
    now = datetime.now(UTC)
    new = [NewEvent("n1", i, "x", "unknown", {"i": i, "trace_metadata": meta}, now) for i in (1, 2)]
    assert store.append(new).appended == 2
    got = store.run_events("n1")
    assert [e.payload for e in got] == [
        {"i": 1, "trace_metadata": meta},
        {"i": 2, "trace_metadata": meta},
    ]
    assert [e.redactions for e in got] == [None, None]
    assert store.append(new).duplicates == 2


def test_downgrade_puts_trace_metadata_back_and_the_chain_verifies(store: Store) -> None:
    events = [e for run in gtc_runs() for e in run]
    ingest_bytes(store, jsonl(events))
    before = [e.payload for e in store.iter_all()]
    store.downgrade("0008")
    assert verify(store, full=True).ok
    with store.reading() as conn:
        rows = conn.execute(sa.text("SELECT payload, redactions FROM events ORDER BY position"))
        payloads, redactions = zip(*rows, strict=True)

    def decode(v: Any) -> Any:
        return v if store.dialect == "postgresql" or not v else json.loads(v)

    assert [decode(p) for p in payloads] == before
    assert all(r is None or set(decode(r)) == {"r"} for r in redactions)
    store.upgrade()
    assert verify(store, full=True).ok
    again = ingest_bytes(store, jsonl(events))
    assert (again.appended, again.duplicates) == (0, len(events))


def test_event_id_lookups_use_the_partial_index(store: Store) -> None:
    if store.dialect != "postgresql":
        return
    with store.reading() as conn:
        conn.exec_driver_sql("SET enable_seqscan = off")
        plan = "\n".join(
            r[0]
            for r in conn.exec_driver_sql(
                "EXPLAIN SELECT content_hash FROM events"
                " WHERE (run_id, event_id) IN (('a', 'x'), ('b', 'y'))"
            )
        )
    assert "run_id_event_id" in plan, plan


def test_the_cut_out_json_is_the_encoded_rest() -> None:
    from tracelake import codec
    from tracelake.store.redactions import split_context, split_encoded

    cases: list[dict[str, Any]] = [
        {"a": 1, "trace_metadata": {"x": "é\u2028", "y": [1, 2.5e-07]}},
        {"trace_metadata": {"x": 1}, "b": 2},
        {"trace_metadata": {"x": 1}},
        {"a": {"trace_metadata": {"q": 1}}, "trace_metadata": {"z": 0.00001}},
        {"a": 1, "trace_metadata": {}},
        {"a": 1, "trace_metadata": "text"},
    ]
    for case in cases:
        stored, meta = split_encoded(case, codec.dumps_bytes(case))
        rest, meta_too = split_context(case)
        assert meta == meta_too
        assert stored == codec.dumps_bytes(rest)


def test_a_full_cache_is_cleared_without_losing_the_batch(store: Store) -> None:
    from tracelake.store.redactions import Contexts, Reports

    engine = store.parts_for_tests().engine
    contexts, reports = Contexts(engine), Reports(engine)
    contexts.cached = 3
    docs = [f'{{"n":{i}}}'.encode() for i in range(8)]
    first = contexts.ids(docs[:3])
    both = contexts.ids(docs[:3] + docs[3:6])  # three known, three new: past the limit
    assert both[:3] == first and len(set(both)) == 6
    assert contexts.ids(docs) == [*both, *contexts.ids(docs[6:])]
    refs = reports.refs([*docs[:2], None])
    assert refs[2] is None and reports.refs(docs[:2]) == refs[:2]
