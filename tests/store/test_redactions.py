"""Redaction reports are interned: each event stores a reference, readers get the report."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from tests.ingest.helpers import gtc_runs, ingest_bytes, jsonl
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import NewEvent, Store


def test_every_event_references_its_exact_report_and_each_report_is_stored_once(
    store: Store,
) -> None:
    runs = gtc_runs()
    events = [e for run in runs for e in run]
    ingest_bytes(store, jsonl(events))
    key = load_pseudonym_key(store.url)
    scrubber = get_scrubber(key)
    stored = list(store.iter_all())
    assert len(stored) == len(events)
    expected = [scrubber.scrub_event("graph_tool_call", e["type"], e).report for e in events]
    assert [store.redaction_report(e.redactions) for e in stored] == expected
    assert all(set(e.redactions or {"r": 0}) == {"r"} for e in stored)
    with store.reading() as conn:
        n = conn.execute(sa.text("SELECT COUNT(*) FROM redaction_reports")).scalar_one()
    distinct = {repr(r) for r in expected if r}
    assert n == len(distinct) < len(events)


def test_appending_new_events_interns_their_reports_too(store: Store) -> None:
    report = {"entities": {"EMAIL_ADDRESS": 1}, "paths": {"a.b": {"EMAIL_ADDRESS": 1}}}
    now = datetime.now(UTC)
    batch = [
        NewEvent("r1", i, "x", "unknown", {"type": "x", "i": i}, now, redactions=report)
        for i in range(1, 4)
    ]
    batch.append(NewEvent("r1", 4, "x", "unknown", {"type": "x"}, now, redactions=None))
    assert store.append(batch).appended == 4
    got = store.run_events("r1")
    assert [store.redaction_report(e.redactions) for e in got] == [report] * 3 + [None]
    # a fresh process (empty cache) reads the same and interns nothing new
    from tracelake.store import open_store

    other = open_store(store.url)
    try:
        assert other.redaction_report(got[0].redactions) == report
        other.append([NewEvent("r2", 1, "x", "unknown", {}, now, redactions=report)])
        with other.reading() as conn:
            assert conn.execute(sa.text("SELECT COUNT(*) FROM redaction_reports")).scalar() == 1
    finally:
        other.dispose()


def test_copy_text_keeps_every_character_of_every_column(store: Store) -> None:
    """The appender writes COPY text itself: tabs, newlines, CRs and backslashes in any
    column, JSON escapes, non-BMP and line-separator characters come back as they went in."""
    nasty = 'a\tb\\c\nd\re \\N \\\\t "q" \u2028 😀 é'
    payload = {"type": "x\\y", "s": nasty, "nested": {nasty: [nasty, 1.5, None, True]}}
    now = datetime.now(UTC)
    e = NewEvent(
        run_id=nasty,
        seq=1,
        type="x\\y",
        source="unknown",
        payload=payload,
        recorded_at=now,
        event_id="id\t\\N",
        plan_id="p\n",
        step_id="\\",
        tool="t\r",
        collection_id="\\N",
        redactions={"entities": {"E\t": 1}, "paths": {"a\\b": {"E\t": 1}}},
    )
    assert store.append([e]).appended == 1
    (got,) = store.run_events(nasty)
    assert (got.run_id, got.type, got.event_id, got.plan_id, got.step_id, got.tool) == (
        nasty,
        "x\\y",
        "id\t\\N",
        "p\n",
        "\\",
        "t\r",
    )
    assert got.collection_id == "\\N" and got.payload == payload
    assert store.redaction_report(got.redactions) == e.redactions
    assert store.append([e]).duplicates == 1  # same content hash read back
