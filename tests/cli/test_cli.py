"""The `tracelake` command as a user runs it (a subprocess, on SQLite and PostgreSQL)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.ingest.helpers import gtc_runs, jsonl


def tl(
    *args: str, url: str, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRACELAKE_DATABASE_URL": url, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "tracelake", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or REPO,
        timeout=120,
    )


@pytest.mark.slow
def test_ingest_stats_and_runs_show(db_url: str, tmp_path: Path) -> None:
    events = [e for run in gtc_runs()[:3] for e in run]
    path = tmp_path / "runs.jsonl.gz"
    path.write_bytes(gzip.compress(jsonl(events)))
    first = tl("ingest", str(path), "--json", url=db_url)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert (summary["appended"], summary["duplicates"], summary["runs"]) == (len(events), 0, 3)
    again = json.loads(tl("ingest", str(path), "--json", url=db_url).stdout)
    assert (again["appended"], again["duplicates"]) == (0, len(events))

    stats = json.loads(tl("stats", "--json", url=db_url).stdout)
    assert stats["events"] == len(events) and stats["runs"] == 3
    run_id = json.loads(
        tl("runs", "show", _first_run(db_url), "--json", url=db_url).stdout.splitlines()[0]
    )
    assert run_id["seq"] == 1 and run_id["type"] == "plan.started"
    missing = tl("runs", "show", "no-such-run", url=db_url)
    assert missing.returncode == 1 and "no run" in missing.stderr


def _first_run(url: str) -> str:
    from tracelake.store import open_store

    store = open_store(url)
    try:
        return store.read_after(0, 1)[0].run_id
    finally:
        store.dispose()


@pytest.mark.slow
def test_ingest_from_stdin_with_bad_lines_exits_1(db_url: str) -> None:
    good = gtc_runs()[0]
    data = jsonl(good[:2]) + b"{broken\n" + jsonl(good[2:])
    result = tl("ingest", "-", "--json", url=db_url, stdin=data)
    assert result.returncode == 1
    summary = json.loads(result.stdout)
    assert summary["appended"] == len(good) and summary["quarantined_by_reason"] == {"not_json": 1}


@pytest.mark.slow
def test_errors_say_what_to_do(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    missing = tl("ingest", str(tmp_path / "nope.jsonl"), url=url)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad_url = tl("stats", url="mysql://localhost/x")
    assert bad_url.returncode == 2 and "SQLite and PostgreSQL" in bad_url.stderr
    upgraded = tl("db", "upgrade", url=url)
    from tracelake.store import migrate

    head = migrate.head_revision()
    assert upgraded.returncode == 0 and f"revision {head}" in upgraded.stdout


@pytest.mark.slow
def test_spool_status_and_drain(db_url: str, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from tracelake.sink.spool import Spool
    from tracelake.store import NewEvent

    spool = Spool(tmp_path / "spool")
    spool.open()
    spool.append(
        "events",
        [
            NewEvent(
                run_id="spooled-run",
                seq=None,
                type="x",
                source="unknown",
                payload={"type": "x"},
                recorded_at=datetime.now(UTC),
                event_id=f"e{i}",
            )
            for i in range(5)
        ],
    )
    spool.close()
    status = json.loads(
        tl("spool", "status", "--dir", str(tmp_path / "spool"), "--json", url=db_url).stdout
    )
    assert (status["events"], status["owners_alive"]) == (5, 0)
    drained = tl("spool", "drain", "--dir", str(tmp_path / "spool"), url=db_url)
    assert drained.returncode == 0 and "5 events appended" in drained.stdout
    assert json.loads(tl("stats", "--json", url=db_url).stdout)["events"] == 5
    status = json.loads(
        tl("spool", "status", "--dir", str(tmp_path / "spool"), "--json", url=db_url).stdout
    )
    assert status["events"] == 0


def test_demo_without_graph_tool_call_says_what_to_install(tmp_path: Path) -> None:
    """A wheel installed without the demo extra: a clear error, not an internal one."""
    code = (
        "import sys; sys.modules['graph_tool_call'] = None; "
        "from tracelake.cli import main; sys.argv = ['tracelake', 'demo']; main()"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env["TRACELAKE_DATABASE_URL"] = f"sqlite:///{tmp_path / 'demo.db'}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'tracelake[demo]'" in done.stderr
    assert "internal error" not in done.stderr
