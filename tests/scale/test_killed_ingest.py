"""``ingest`` killed while its workers run: the workers go with it, and the next ``ingest``
completes the input exactly once instead of waiting for a lock that nobody will release.

Found by a fault attack (not by these tests' author): after SIGKILL or SIGTERM of the main
process its forked workers lived on as orphans, holding through the socket they inherited the
main process's database connection, idle in its transaction with the append's advisory lock;
the next ingest waited for that lock for good, without a word.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.conftest import PgServer, require_agentlane_samples
from tests.corpora.realistic import write_corpus

pytestmark = pytest.mark.slow
KEY = "killed-ingest-test-key-0123456789abcdef"


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _ingest(
    url: str, path: Path, stderr: int = subprocess.PIPE, stdout: int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TRACELAKE_DATABASE_URL": url, "TRACELAKE_PSEUDONYM_KEY": KEY}
    return subprocess.Popen(
        [sys.executable, "-m", "tracelake", "ingest", "--json", str(path)],
        env=env,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,  # its own process group, as a terminal's job is
    )


def _stored(url: str) -> tuple[int, int]:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as conn:
        stored, distinct = conn.execute(
            sa.text("SELECT count(*), count(DISTINCT (run_id, seq)) FROM events")
        ).one()
    engine.dispose()
    return int(stored), int(distinct)


def _corpus(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "events.jsonl"
    seed = int.from_bytes(os.urandom(2), "big")
    print(f"corpus seed {seed}")
    write_corpus(path, 6000, require_agentlane_samples(), seed=seed)  # > 4 MiB: workers
    with path.open("rb") as f:
        lines = sum(1 for line in f if line.strip())
    return path, lines


def _wait_for_workers(pid: int) -> list[int]:
    deadline = time.monotonic() + 60
    while len(_children(pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(pid)
    assert len(workers) >= 2, "the workers never started"
    return workers


def _gone(workers: list[int]) -> None:
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    orphans = [w for w in workers if _alive(w)]
    for w in orphans:  # leave nothing behind, whatever the outcome
        os.kill(w, signal.SIGKILL)
    assert not orphans, "the workers outlived the ingest they served"


def _complete_again(url: str, path: Path, lines: int) -> None:
    second = _ingest(url, path)
    try:
        _, err = second.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        second.kill()
        raise AssertionError("the next ingest hung") from None
    assert second.returncode == 0, err.decode()[-2000:]
    stored, distinct = _stored(url)
    assert stored == distinct == lines


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the death signal is Linux's")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_killed_ingest_takes_its_workers_and_the_next_one_completes(
    pg_server: PgServer, tmp_path: Path, how: signal.Signals
) -> None:
    path, lines = _corpus(tmp_path)
    url = pg_server.url(pg_server.create(pg_server.template))
    first = _ingest(url, path, stderr=subprocess.DEVNULL)
    workers = _wait_for_workers(first.pid)
    time.sleep(1.0)  # appending by now
    os.kill(first.pid, how)
    first.wait(timeout=30)
    _gone(workers)
    _complete_again(url, path, lines)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the death signal is Linux's")
@pytest.mark.parametrize(
    ("how", "group"),
    [(signal.SIGTERM, False), (signal.SIGTERM, True), (signal.SIGINT, True)],
    ids=["sigterm", "sigterm-to-group", "ctrl-c"],
)
def test_a_stopped_ingest_says_what_it_stored_and_exits_with_the_signal(
    pg_server: PgServer, tmp_path: Path, how: signal.Signals, group: bool
) -> None:
    """SIGTERM (a supervisor; `timeout` and systemd send it to the whole process group) or
    Ctrl-C (SIGINT to the group, workers too): the summary prints, counting no more than is
    stored, and the exit status names the signal. A fault attack: with SIGTERM to the group,
    a worker that died mid-result left the ingest hung after its summary, 9 runs in 14."""
    path, lines = _corpus(tmp_path)
    url = pg_server.url(pg_server.create(pg_server.template))
    first = _ingest(url, path, stdout=subprocess.PIPE)
    workers = _wait_for_workers(first.pid)
    deadline = time.monotonic() + 60
    while _stored(url)[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if group:
        os.killpg(first.pid, how)  # what a terminal's Ctrl-C, `timeout` and systemd do
    else:
        os.kill(first.pid, how)
    try:
        out, err = first.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(first.pid, signal.SIGKILL)
        raise AssertionError("the stopped ingest did not exit") from None
    _gone(workers)
    text = err.decode()
    assert first.returncode == 128 + how, text[-2000:]
    assert f"stopped by {how.name}" in text and "run the same ingest again" in text.lower()
    assert "Traceback" not in text and "worker process died" not in text, text[-2000:]
    summary = json.loads(out)
    stored, _ = _stored(url)
    assert 0 < summary["appended"] <= stored < lines, (summary, stored, lines)
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as conn:
        runs = conn.execute(sa.text("SELECT count(DISTINCT run_id) FROM events")).scalar_one()
    engine.dispose()
    assert summary["runs"] <= runs, (summary, runs)  # counted once stored, not before
    _complete_again(url, path, lines)


def test_an_ingest_started_with_sigint_ignored_keeps_ignoring_it(
    pg_server: PgServer, tmp_path: Path
) -> None:
    """``tracelake ingest ... &`` in a script starts with SIGINT ignored: a Ctrl-C meant for the
    foreground job must not stop it (a fault attack: the handler replaced the inherited SIG_IGN)."""
    path, lines = _corpus(tmp_path)
    url = pg_server.url(pg_server.create(pg_server.template))
    env = {**os.environ, "TRACELAKE_DATABASE_URL": url, "TRACELAKE_PSEUDONYM_KEY": KEY}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracelake", "ingest", str(path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    workers = _wait_for_workers(proc.pid)
    deadline = time.monotonic() + 60
    while _stored(url)[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the ingest hung") from None
    _gone(workers)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert _stored(url) == (lines, lines)
