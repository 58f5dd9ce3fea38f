"""Building input streams from real runner events."""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tests.conftest import require_agentlane_samples
from tracelake.config import Settings
from tracelake.demo import run_scenario, scenarios
from tracelake.ingest import Ingestor, IngestReport
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import Store


def gtc_runs(plan_prefix: str = "plan") -> list[list[dict[str, Any]]]:
    """One list of asdict() events per scenario, from the real PlanRunner."""
    return [
        [asdict(e) for e in run_scenario(s, plan_id=f"{plan_prefix}-{s.name}")] for s in scenarios()
    ]


def jsonl(events: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(e, ensure_ascii=False).encode() + b"\n" for e in events)


def agentlane_bytes() -> bytes:
    path = require_agentlane_samples() / "events.jsonl"
    return path.read_bytes()


# Worker processes for ingest_bytes; tests/ingest/conftest.py runs every ingest test with 1
# (in-process) and 2 (worker processes): the parallel path must store exactly the same.
WORKERS = [1]


def ingest_bytes(
    store: Store, data: bytes, origin: str = "test.jsonl", **settings: Any
) -> IngestReport:
    key = load_pseudonym_key(store.url)
    settings.setdefault("ingest_workers", WORKERS[0])
    ingestor = Ingestor(store, get_scrubber(key), key, Settings(database_url=store.url, **settings))
    if data[:2] != b"\x1f\x8b":
        return ingestor.ingest(io.BufferedReader(io.BytesIO(data)), origin)
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        return ingestor.ingest(stream, origin)  # type: ignore[arg-type]


def write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path
