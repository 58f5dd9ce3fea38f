"""Run identity is stable across versions, and distinct ids never collapse.

The fixtures were made by the code of revisions 0003 and 0005 themselves (see
``fixtures/make_legacy.py``): a re-ingest of the same input after upgrading appends nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.ingest.helpers import ingest_bytes
from tracelake.run_identity import _same
from tracelake.store import Store, open_store
from tracelake.store.records import EncodedEvent, NewEvent, StoredHead

FIXTURES = Path(__file__).parent / "fixtures"
INPUT = FIXTURES / "legacy_input.jsonl"


def tl(*args: str, url: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACELAKE_")}
    env.update({"TRACELAKE_DATABASE_URL": url, "PYTHONPATH": str(REPO)})
    return subprocess.run(
        [sys.executable, "-m", "tracelake", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=300,
    )


def copy_fixture(revision: str, tmp: Path) -> str:
    db = tmp / f"rev{revision}.db"
    shutil.copy(FIXTURES / f"rev{revision}.db", db)
    shutil.copy(FIXTURES / f"rev{revision}.db.pseudonym.key", tmp / f"{db.name}.pseudonym.key")
    return f"sqlite:///{db}"


@pytest.mark.slow
@pytest.mark.parametrize("revision", ["0003", "0005"])
def test_reingest_after_upgrade_appends_nothing(revision: str, tmp_path: Path) -> None:
    url = copy_fixture(revision, tmp_path)
    store = open_store(url)
    try:
        assert store.revision() == revision
        before = store.stats()
    finally:
        store.dispose()
    up = tl("db", "upgrade", url=url)
    assert up.returncode == 0, up.stderr
    again = tl("ingest", "-", "--json", url=url, stdin=INPUT.read_bytes())
    summary = json.loads(again.stdout)
    assert summary["lines"] == before["events"]
    assert summary["appended"] == 0, summary
    # 0003's scrubber stored one value that today's scrubber redacts more: that event is a
    # sequence_conflict (quarantined), never a second copy.
    assert set(summary["quarantined_by_reason"]) <= {"sequence_conflict"}
    store = open_store(url)
    try:
        after = store.stats()
    finally:
        store.dispose()
    assert (after["events"], after["runs"]) == (before["events"], before["runs"])


def test_legacy_bare_runs_are_found_from_any_path(tmp_path: Path) -> None:
    """Before 0005 a bare run's id did not depend on the input's path: it still matches."""
    url = copy_fixture("0003", tmp_path)
    assert tl("db", "upgrade", url=url).returncode == 0
    elsewhere = tmp_path / "renamed.jsonl"
    shutil.copy(INPUT, elsewhere)
    summary = json.loads(tl("ingest", str(elsewhere), "--json", url=url).stdout)
    assert summary["appended"] == 0, summary


@pytest.mark.slow
def test_fresh_database_is_not_affected_by_legacy_lookup(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    first = json.loads(tl("ingest", str(INPUT), "--json", url=url).stdout)
    assert first["appended"] == first["lines"]
    again = json.loads(tl("ingest", str(INPUT), "--json", url=url).stdout)
    assert (again["appended"], again["duplicates"]) == (0, first["lines"])


def lone_surrogate_ids() -> st.SearchStrategy[str]:
    surrogate = st.integers(0xD800, 0xDFFF).map(chr)
    plain = st.text(st.characters(exclude_categories=["Cs"]), max_size=6)
    return st.builds(lambda a, s, b: a + s + b, plain, surrogate, plain)


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('ids') / 'ids.db'}")
    store.upgrade()
    return store


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    ids=st.lists(lone_surrogate_ids() | st.text(max_size=8), min_size=2, max_size=6, unique=True)
)
def test_distinct_run_ids_never_collapse(sqlite_store: Store, ids: list[str]) -> None:
    lines = b"".join(
        json.dumps(
            {"type": "runner.event", "run_id": rid, "seq": 1, "event": {"type": "x"}}
        ).encode()
        + b"\n"
        for rid in ids
        if rid.strip()
    )
    wanted = len([rid for rid in ids if rid.strip()])
    report = ingest_bytes(sqlite_store, lines, origin="ids.jsonl")
    assert report.quarantined_total == 0, dict(report.quarantined)
    assert len(report.runs) == wanted


def _encoded(tool: str, step: str = "s3") -> EncodedEvent:
    event = NewEvent(
        run_id="req-1",
        seq=None,
        type="step.succeeded",
        source="graph_tool_call",
        payload={"type": "step.succeeded", "step_id": step, "tool": tool},
        recorded_at=datetime(2026, 1, 1, tzinfo=UTC),
        event_id="ev-x-1",
        step_id=step,
        tool=tool,
    )
    return EncodedEvent.of(event)


def test_a_legacy_key_is_adopted_only_for_the_same_event() -> None:
    stored = _encoded("動物")
    head = StoredHead(stored.content_hash, stored.type, None, "s3", "動物")
    assert _same(head, stored)  # the very same content
    assert _same(head, _encoded("[PERSON]"))  # the same event, scrubbed by today's version
    assert not _same(head, _encoded("getOrder"))  # another tool at that key
    assert not _same(head, _encoded("[PERSON]", step="s4"))  # another step
    assert not _same(None, stored)
