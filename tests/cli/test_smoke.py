"""The ``tracelake`` command as a new user meets it, against whatever is installed.

Self-contained (no imports from the repository), so CI can copy this file next to a fresh
venv that has only the built wheel and run it with ``TRACELAKE_CLI=<venv>/bin/tracelake``
(see ``.ci/wheel.sh``): that proves migrations, SQL and the pipelines ship inside the wheel.
In the normal suite it runs ``python -m tracelake`` from the checkout.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

CLI = shlex.split(os.environ.get("TRACELAKE_CLI", "")) or [sys.executable, "-m", "tracelake"]
SEED = int(os.environ.get("TRACELAKE_SMOKE_SEED", random.randrange(1 << 30)))
HOSTILE = ["[/]", "[bold red]x", "\x1b[2J\x1b[31m", "\x9b31m", "\u202eevil", "a\tb\nc", "[link=x]"]


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TRACELAKE_")}
    if os.environ.get("TRACELAKE_CLI"):  # the installed wheel, nothing from the checkout
        full.pop("PYTHONPATH", None)
    full.update({"TRACELAKE_DATABASE_URL": f"sqlite:///{cwd / 'lake.db'}", "COLUMNS": "80"})
    full.update(env or {})
    return subprocess.run(
        [*CLI, *args], cwd=cwd, env=full, input=stdin, capture_output=True, timeout=300
    )


def text(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stdout.decode() + result.stderr.decode()


def events(rng: random.Random, runs: int, collection: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for r in range(runs):
        plan = f"plan-{rng.randrange(10**6)}"
        meta = {"collection_id": collection}
        found.append({"type": "plan.started", "plan_id": plan, "trace_metadata": meta})
        for s in range(rng.randrange(1, 4)):
            found.append(
                {"type": "step.started", "plan_id": plan, "step_id": f"s{s}", "tool": "getOrder"}
            )
            found.append(
                {"type": "step.succeeded", "plan_id": plan, "step_id": f"s{s}", "tool": "getOrder"}
            )
        found.append({"type": rng.choice(HOSTILE), "plan_id": plan, "note": rng.choice(HOSTILE)})
        found.append({"type": "plan.completed", "plan_id": plan, "run": r})
    return found


def jsonl(items: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(e, ensure_ascii=False).encode() + b"\n" for e in items)


@pytest.fixture
def rng() -> random.Random:
    print(f"TRACELAKE_SMOKE_SEED={SEED}")
    return random.Random(SEED)


def test_usage_errors_look_like_click_and_exit_2(tmp_path: Path) -> None:
    version = run("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.decode().startswith("tracelake ")
    for args, expected in [
        (["--bogus"], "No such option"),
        (["ingest"], "Missing argument"),
        (["runs", "show"], "Missing argument"),
        (["runs", "list", "--limit", "zero"], "Invalid value"),
        (["nosuchcommand"], "No such command"),
    ]:
        result = run(*args, cwd=tmp_path)
        out = text(result)
        assert result.returncode == 2, out
        assert "Usage: " in out and f"Error: {expected}" in out, out
        assert "internal error" not in out and "Traceback" not in out, out


@pytest.mark.slow
def test_database_errors_say_what_to_do(tmp_path: Path) -> None:
    url = "postgresql://alice:s3cr3t-pw@127.0.0.1:1/lake"
    down = run("stats", cwd=tmp_path, env={"TRACELAKE_DATABASE_URL": url})
    assert down.returncode == 2 and "unreachable" in text(down), text(down)
    assert "s3cr3t-pw" not in text(down)
    (tmp_path / "not.db").write_bytes(b"this is not sqlite" * 100)
    bad = run("stats", cwd=tmp_path, env={"TRACELAKE_DATABASE_URL": "sqlite:///not.db"})
    assert bad.returncode == 2 and "not an SQLite database" in text(bad), text(bad)
    assert "Traceback" not in text(bad) and "internal error" not in text(bad)
    folder = run("ingest", str(tmp_path), cwd=tmp_path)
    assert folder.returncode == 2 and "is a directory" in text(folder)


@pytest.mark.slow
def test_a_user_session_from_install_to_export(tmp_path: Path, rng: random.Random) -> None:
    up = run("db", "upgrade", cwd=tmp_path)
    assert up.returncode == 0, text(up)
    mode = stat.S_IMODE((tmp_path / "lake.db").stat().st_mode)
    assert mode == 0o600, oct(mode)
    history = run("db", "history", cwd=tmp_path)
    assert history.returncode == 0 and "0001" in history.stdout.decode()
    assert "up to date" in run("db", "current", cwd=tmp_path).stdout.decode()

    collection = "".join(rng.choice("가나다라마바사아자차카타파하") for _ in range(30))
    good = jsonl(events(rng, rng.randrange(3, 8), collection))
    cut = gzip.compress(good + jsonl(events(rng, 5, collection)))
    damaged = tmp_path / "damaged.jsonl.gz"
    damaged.write_bytes(cut[: len(cut) * 3 // 4])
    plain = tmp_path / "good.jsonl"
    plain.write_bytes(good)
    ingested = run("ingest", "good.jsonl", "damaged.jsonl.gz", "--json", cwd=tmp_path)
    assert ingested.returncode == 1, text(ingested)  # the damage is quarantined
    summary = json.loads(ingested.stdout)
    assert summary["appended"] > 0 and summary["quarantined_by_reason"].get("truncated_gzip") == 1

    listed = run("runs", "list", cwd=tmp_path)
    out = listed.stdout.decode()
    assert listed.returncode == 0 and "\x1b" not in out and "\x9b" not in out
    assert not any(c in out for c in "┏━│╭"), out  # plain, not box-drawn, when piped
    rows = json.loads(run("runs", "list", "--json", "--limit", "1000", cwd=tmp_path).stdout)
    assert len(rows) == summary["runs"]
    assert all(row["run_id"] in out for row in rows)  # never cut

    for args in (["stats"], ["runs", "show", rows[0]["run_id"]], ["explain", rows[0]["run_id"]]):
        shown = run(*args, cwd=tmp_path)
        assert shown.returncode == 0, text(shown)
        assert "\x1b" not in text(shown) and "\u202e" not in text(shown), text(shown)

    quarantined = json.loads(run("quarantine", "list", "--json", cwd=tmp_path).stdout)
    assert [q["reason"] for q in quarantined] == ["truncated_gzip"]
    one = run("quarantine", "show", str(quarantined[0]["id"]), cwd=tmp_path)
    assert one.returncode == 0 and "truncated_gzip" in one.stdout.decode()

    projected = run("project", cwd=tmp_path)
    assert projected.returncode == 0, text(projected)
    statuses = json.loads(run("runs", "list", "--json", cwd=tmp_path).stdout)
    assert all(r["status"] for r in statuses)
    exported = run("export", "parquet", "lake", cwd=tmp_path)
    assert exported.returncode == 0, text(exported)
    names = [p.name for p in (tmp_path / "lake" / "events").iterdir()]
    assert names and all(len(n.encode()) < 200 for n in names), names
    dry = run("promote", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, text(dry)

    refused = run("db", "downgrade", "base", cwd=tmp_path)
    assert refused.returncode == 2 and "--force" in text(refused)
    assert json.loads(run("stats", "--json", cwd=tmp_path).stdout)["events"] > 0
