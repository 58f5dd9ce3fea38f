"""Issue 3's end-to-end promise: a full dump of the database holds none of the planted values.

Inputs: real PlanRunner runs with personal data in arguments, outputs, errors and
trace_metadata; the agentlane samples with their secrets.txt; and bad lines that carry
secrets into the quarantine. SQLite is checked byte for byte (database file and WAL, free
pages included); PostgreSQL through ``pg_dump`` of the test database.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import sqlalchemy as sa

from tests.conftest import require_agentlane_samples
from tests.corpora.gtc_commerce import all_planted, build_gtc_corpus
from tests.ingest.helpers import agentlane_bytes, ingest_bytes, jsonl
from tracelake.store import Store


def planted_values() -> tuple[bytes, list[str]]:
    events, planted = build_gtc_corpus(runs=3)
    values = all_planted(planted)
    secrets_file = require_agentlane_samples() / "secrets.txt"
    secrets = [s for s in secrets_file.read_text(encoding="utf-8").splitlines() if s.strip()]
    bad_lines = [
        f"not json {values[0]} {secrets[0]}".encode(),
        json.dumps({"type": "plan.started", "stage": "runner", "step_count": secrets[1]}).encode(),
        json.dumps({"no_type": values[1], "card": secrets[2]}, ensure_ascii=True).encode(),
    ]
    data = jsonl(events) + agentlane_bytes() + b"\n".join(bad_lines) + b"\n"
    return data, sorted({*values, *secrets})


def forms(value: str) -> list[bytes]:
    """The value raw, JSON-\\u-escaped, and as a JSON string body."""
    escaped = json.dumps(value)[1:-1]
    return list(
        {value.encode(), escaped.encode(), json.dumps(value, ensure_ascii=False)[1:-1].encode()}
    )


def full_dump(store: Store) -> bytes:
    if store.dialect == "sqlite":
        store.dispose()
        path = sa.make_url(store.url).database
        assert path
        chunks = []
        for suffix in ("", "-wal"):
            try:
                with open(path + suffix, "rb") as f:
                    chunks.append(f.read())
            except FileNotFoundError:
                pass
        return b"\n".join(chunks)
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        pytest.fail(
            "pg_dump is needed for the PostgreSQL dump check (apt-get install postgresql-client)"
        )
    url = sa.make_url(store.url)
    cmd = [
        pg_dump,
        "--data-only",
        "-h",
        url.host or "127.0.0.1",
        "-p",
        str(url.port or 5432),
        "-U",
        url.username or "postgres",
        url.database or "",
    ]
    return subprocess.run(cmd, check=True, capture_output=True).stdout


def test_full_database_dump_holds_no_planted_value(store: Store) -> None:
    data, values = planted_values()
    assert len(values) > 80
    report = ingest_bytes(store, data)
    assert report.appended > 900 and report.quarantined_total == 3 and report.scrub_failed == 0
    dump = full_dump(store)
    assert b"plan.completed" in dump and b"agent_start" in dump  # the dump really has the data
    leaked = [v for v in values if any(f in dump for f in forms(v))]
    assert leaked == []
