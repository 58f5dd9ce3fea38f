"""The lifecycle commands as an operator runs them (a subprocess, both backends)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from faker import Faker

from tests.cli.test_cli import tl
from tests.lifecycle.helpers import envelopes, jsonl, subjects
from tracelake.store.connection import create_engine


@pytest.mark.slow
def test_find_erase_verify_retention_and_tampering(
    db_url: str, tmp_path: Path, fake: Faker
) -> None:
    who = subjects(fake, 3)
    path = tmp_path / "runs.jsonl"
    path.write_bytes(jsonl(envelopes(fake, who, 9, "cli")))
    assert tl("ingest", str(path), url=db_url).returncode == 0

    found = tl("subjects", "find", who[0], "--json", url=db_url)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["events"] == 3

    erased = tl("erase", "--subject", who[0], "--yes", "--json", url=db_url)
    assert erased.returncode == 0, erased.stderr
    receipt = json.loads(erased.stdout)
    assert receipt["events_unlinked"] == 3 and who[0] not in erased.stdout
    assert json.loads(tl("subjects", "find", who[0], "--json", url=db_url).stdout)["events"] == 0

    ok = tl("db", "verify", url=db_url)
    assert ok.returncode == 0 and "intact" in ok.stdout, ok.stdout + ok.stderr

    cut = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
    applied = tl(
        "retention",
        "apply",
        "--before",
        cut,
        "--archive",
        str(tmp_path / "a"),
        "--yes",
        "--json",
        url=db_url,
    )
    assert applied.returncode == 0, applied.stderr
    report = json.loads(applied.stdout)
    assert report["archived"] == report["removed"] == 9 * 4 + 1  # + subject.erased
    assert tl("db", "verify", "--full", url=db_url).returncode == 0

    assert tl("ingest", str(path), url=db_url).returncode == 0  # gone, so stored again
    engine = create_engine(db_url)
    with engine.begin() as conn:
        victim = conn.execute(sa.text("SELECT max(position) - 5 FROM events")).scalar()
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("DROP TRIGGER events_no_update")
        else:
            conn.exec_driver_sql("ALTER TABLE events DISABLE TRIGGER events_append_only_row")
        conn.execute(
            sa.text("UPDATE events SET run_id = 'moved' WHERE position = :p"), {"p": victim}
        )
    engine.dispose()
    broken = tl("db", "verify", url=db_url)
    assert broken.returncode == 1
    assert f"broken at position {victim}" in broken.stderr
