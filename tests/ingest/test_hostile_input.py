"""Inputs that once crashed ingest, leaked through an id, or collided (review findings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ingest import helpers
from tests.ingest.helpers import gtc_runs, ingest_bytes
from tracelake.store import Store


def lines(*objs: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"type": "x", "n": 1e400}', "non_finite_number"),
        (b'{"type": "x", "n": ' + b"9" * 5000 + b"}", "not_json"),
    ],
)
def test_numbers_python_cannot_hold_are_quarantined(store: Store, raw: bytes, reason: str) -> None:
    report = ingest_bytes(store, raw + b"\n" + lines({"type": "y"}))
    assert (report.appended, dict(report.quarantined)) == (1, {reason: 1})


def test_nul_and_lone_surrogates_are_stored_replaced_on_both_backends(store: Store) -> None:
    run = gtc_runs()[0]
    run[1] = {**run[1], "note": "a\u0000b", "bad": "x\ud800y"}  # json.dumps writes \u escapes
    report = ingest_bytes(store, lines(*run))
    assert (report.appended, report.quarantined_total) == (len(run), 0)
    stored = store.read_after(0)[1].payload
    assert "\x00" not in json.dumps(stored, ensure_ascii=False)
    assert stored["note"] == "a\ufffdb"


def test_a_nul_in_a_quarantined_line_is_stored_replaced_on_both_backends(store: Store) -> None:
    """A damaged line with a NUL (raw, or as a \\u0000 escape the preview decodes) is
    quarantined: PostgreSQL refused the row (found by a fault attack: the whole batch of
    quarantine rows was lost, and every re-run failed the same way)."""
    data = b'{"type":"plan.started"}\nnot json 1\n\x00\n{"type":"x","a":"\\u0000" broken\n'
    report = ingest_bytes(store, data)
    assert report.quarantined_total == 3
    with store.reading() as conn:
        import sqlalchemy as sa

        from tracelake.store.schema import quarantine

        rows = conn.execute(sa.select(quarantine.c.detail, quarantine.c.preview)).all()
    assert len(rows) == 3
    assert all("\x00" not in (text or "") for row in rows for text in row)


def test_ids_and_types_with_personal_data_are_pseudonymised(store: Store) -> None:
    event = gtc_runs()[0][0]
    report = ingest_bytes(
        store,
        lines(
            {
                "type": "runner.event",
                "run_id": "alice.kim@example.com",
                "event_id": "010-1234-5678",
                "event": event,
            },
            {"type": "custom.900101-1234567", "stage": "x"},
        ),
    )
    assert report.appended == 2
    stored = store.read_after(0)
    dump = json.dumps(
        [(e.run_id, e.event_id, e.type, e.payload) for e in stored], ensure_ascii=False
    )
    for planted in ("alice.kim@example.com", "010-1234-5678", "900101-1234567"):
        assert planted not in dump
    assert stored[0].run_id.startswith("psn_")
    assert (stored[0].event_id or "").startswith("psn_")
    again = ingest_bytes(
        store,
        lines(
            {
                "type": "runner.event",
                "run_id": "alice.kim@example.com",
                "event_id": "010-1234-5678",
                "event": event,
            }
        ),
    )
    assert again.duplicates == 1  # pseudonyms are stable: re-ingest still dedupes


def test_per_stream_event_ids_do_not_collide_across_runs(store: Store) -> None:
    a, b = gtc_runs()[0][:2], gtc_runs()[1][:2]
    data = lines(
        *(
            {"type": "runner.event", "run_id": run, "event_id": str(i), "event": e}
            for run, events in (("req-A", a), ("req-B", b))
            for i, e in enumerate(events, 1)
        )
    )
    report = ingest_bytes(store, data)
    assert (report.appended, report.quarantined_total) == (4, 0)


def test_a_run_split_over_two_files_continues(store: Store) -> None:
    run = gtc_runs()[0]
    env = [{"type": "runner.event", "run_id": "ql-run-1", "event": e} for e in run]
    half = len(env) // 2
    assert ingest_bytes(store, lines(*env[:half]), origin="a.jsonl").appended == half
    assert ingest_bytes(store, lines(*env[half:]), origin="b.jsonl").appended == len(env) - half
    assert ingest_bytes(store, lines(*env), origin="c.jsonl").duplicates == len(env)
    stored = store.run_events("ql-run-1")
    assert [e.type for e in stored] == [e["type"] for e in run]
    assert [e.seq for e in stored] == list(range(1, len(run) + 1))


def test_identical_bare_runs_in_two_files_are_two_runs(store: Store, tmp_path: Path) -> None:
    from tracelake.config import Settings
    from tracelake.ingest import Ingestor, open_source
    from tracelake.scrub import get_scrubber, load_pseudonym_key

    key = load_pseudonym_key(store.url)
    settings = Settings(database_url=store.url, ingest_workers=helpers.WORKERS[0])
    ingestor = Ingestor(store, get_scrubber(key), key, settings)
    data = lines(*gtc_runs()[0])
    day1, day2 = tmp_path / "day1.jsonl", tmp_path / "day2.jsonl"
    day1.write_bytes(data)
    day2.write_bytes(data)
    counts = []
    for path in (day1, day2, day1):
        with open_source(str(path)) as stream:
            counts.append(ingestor.ingest(stream, str(path)).appended)
    assert counts == [len(gtc_runs()[0]), len(gtc_runs()[0]), 0]
    assert store.stats()["runs"] == 2
