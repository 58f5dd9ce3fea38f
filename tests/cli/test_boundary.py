"""The one error boundary, the listings, and the files tracelake creates — in process."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.io import partition_dir
from tests.conftest import PgServer
from tests.ingest.helpers import gtc_runs, ingest_bytes, jsonl
from tracelake.cli import main
from tracelake.errors import StoreBusyError
from tracelake.store import Store, open_store
from tracelake.store.connection import create_engine, retry_busy, translate
from tracelake.store.schema import events


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(option=st.from_regex(r"--[a-z][a-z0-9-]{1,20}", fullmatch=True))
def test_unknown_options_are_usage_errors(option: str) -> None:
    if option in ("--help", "--version"):
        return
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as done:
        main(["stats", option])
    assert done.value.code == 2
    assert "Usage: " in err.getvalue() and "No such option" in err.getvalue(), err.getvalue()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "--version")
    assert code == 0 and out.startswith("tracelake 0.")


def test_locked_sqlite_is_reported_as_busy(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError) as raw:
        other.execute("BEGIN IMMEDIATE")
    error = translate(sa.exc.OperationalError("BEGIN IMMEDIATE", None, raw.value), "append")
    assert isinstance(error, StoreBusyError) and "write lock" in str(error)
    assert "run the command again" in str(error)
    holder.rollback()


@pytest.mark.postgres
def test_a_real_deadlock_is_reported_as_one(pg_server: PgServer) -> None:
    engine = create_engine(pg_server.url(pg_server.create()))
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE dl (id int primary key, v int)"))
        conn.execute(sa.text("INSERT INTO dl VALUES (1, 0), (2, 0)"))
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def worker(first: int, second: int) -> None:
        try:
            with engine.begin() as conn:
                conn.execute(sa.text("UPDATE dl SET v = v + 1 WHERE id = :i"), {"i": first})
                barrier.wait()
                conn.execute(sa.text("UPDATE dl SET v = v + 1 WHERE id = :i"), {"i": second})
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=p) for p in ((1, 2), (2, 1))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    engine.dispose()
    assert len(errors) == 1, errors
    assert isinstance(errors[0], StoreBusyError) and "deadlock" in str(errors[0])
    assert "unreachable" not in str(errors[0])


def test_retry_busy_retries_then_gives_up() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise StoreBusyError("busy")
        return "done"

    assert retry_busy(flaky, first_wait=0.001) == "done" and len(calls) == 3
    with pytest.raises(StoreBusyError):
        retry_busy(lambda: (_ for _ in ()).throw(StoreBusyError("x")), 2, 0.001)


def test_new_sqlite_files_are_private(tmp_path: Path) -> None:
    os.umask(0o022)
    store = open_store(f"sqlite:///{tmp_path / 'private.db'}")
    try:
        store.upgrade()
        with store.reading() as conn:  # the WAL exists while a connection is open
            conn.execute(sa.select(events.c.position).limit(1)).all()
            for path in tmp_path.glob("private.db*"):
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        store.dispose()


def _load_key(path: str, barrier: Any, results: Any) -> None:
    from tracelake.scrub.pseudonym import load_pseudonym_key

    barrier.wait()
    try:
        results.put(load_pseudonym_key(f"sqlite:///{path}", env={}).hex())
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        results.put(f"error: {exc}")


def test_many_processes_on_a_fresh_file_agree_on_one_key(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    n = 40
    for attempt in range(3):
        path = str(tmp_path / f"race{attempt}.db")
        barrier, results = ctx.Barrier(n), ctx.Queue()
        procs = [ctx.Process(target=_load_key, args=(path, barrier, results)) for _ in range(n)]
        for p in procs:
            p.start()
        keys = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(30)
        assert not [k for k in keys if k.startswith("error")], keys
        assert len(set(keys)) == 1
        key_file = Path(path + ".pseudonym.key")
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert not list(tmp_path.glob(f"race{attempt}.db.pseudonym.key.*"))  # no temp left


def test_downgrade_refuses_to_drop_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'down.db'}"
    assert cli(capsys, "db", "upgrade", "--database-url", url)[0] == 0
    code, _, err = cli(capsys, "db", "downgrade", "base", "--database-url", url)
    assert code == 2 and "--force" in err
    code, out, _ = cli(capsys, "db", "current", "--database-url", url)
    assert "up to date" in out
    code, out, err = cli(capsys, "db", "downgrade", "0004", "--database-url", url)
    assert code == 0 and "0005" in out, err
    code, out, err = cli(capsys, "db", "downgrade", "base", "--force", "--database-url", url)
    assert code == 0, err
    engine = sa.create_engine(url)
    assert "events" not in sa.inspect(engine).get_table_names()
    engine.dispose()


@settings(max_examples=300)
@given(st.text(max_size=300))
def test_partition_directories_are_bounded_and_distinct(value: str) -> None:
    name = partition_dir(value)
    assert 0 < len(name.encode("utf-8", "surrogatepass")) <= 160
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert partition_dir(value + "x") != name
    if "~" not in name:  # short values stay percent-encoded: Hive readers decode them back
        assert unquote(name, errors="surrogatepass") == value


def test_listings(store: Store, db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    runs = gtc_runs()[:4]
    ingest_bytes(store, jsonl([e for run in runs for e in run]) + b"not json\n{}\n")
    code, out, err = cli(capsys, "runs", "list", "--database-url", db_url)
    assert code == 0 and len(out.splitlines()) == 5 and "(not projected)" in out
    assert "tracelake project" in err
    assert cli(capsys, "project", "--database-url", db_url)[0] == 0
    code, out, err = cli(capsys, "runs", "list", "--json", "--database-url", db_url)
    import json

    listed = json.loads(out)
    assert len(listed) == 4 and all(r["status"] for r in listed) and not err
    status = listed[0]["status"]
    code, out, _ = cli(
        capsys, "runs", "list", "--status", status, "--json", "--database-url", db_url
    )
    assert {r["status"] for r in json.loads(out)} == {status}
    code, out, _ = cli(capsys, "runs", "list", "--limit", "2", "--json", "--database-url", db_url)
    assert len(json.loads(out)) == 2
    code, out, _ = cli(capsys, "quarantine", "list", "--json", "--database-url", db_url)
    items = json.loads(out)
    assert sorted(i["reason"] for i in items) == ["missing_type", "not_json"]
    code, out, _ = cli(capsys, "quarantine", "show", str(items[0]["id"]), "--database-url", db_url)
    assert code == 0 and "dedupe_key" not in out
    code, _, err = cli(capsys, "quarantine", "show", "999999", "--database-url", db_url)
    assert code == 1 and "quarantine list" in err
    code, _, err = cli(capsys, "explain", "nope", "--database-url", db_url)
    assert code == 1 and "runs list" in err


def test_inputs_are_checked_before_anything_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'inputs.db'}"
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(gtc_runs()[0]))
    for bad, expected in [("missing.jsonl", "no such file"), (str(tmp_path), "is a directory")]:
        code, _, err = cli(capsys, "ingest", str(good), bad, "--database-url", url)
        assert code == 2 and expected in err, err
    code, out, _ = cli(capsys, "stats", "--json", "--database-url", url)
    assert '"events": 0' in out


def test_unknown_revisions_say_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    assert cli(capsys, "db", "upgrade", "--database-url", url)[0] == 0
    code, _, err = cli(capsys, "db", "downgrade", "0999", "--database-url", url)
    assert code == 2 and "db history" in err and "internal error" not in err
    with sqlite3.connect(tmp_path / "newer.db") as conn:  # as if a newer tracelake migrated it
        conn.execute("UPDATE alembic_version SET version_num = '0999'")
    for args in (["db", "upgrade"], ["stats"], ["runs", "list"]):
        code, _, err = cli(capsys, *args, "--database-url", url)
        assert code == 2 and "newer tracelake" in err, err
    code, out, err = cli(capsys, "db", "history", "--database-url", url)
    assert code == 0 and "0001" in out and "does not know" in err
