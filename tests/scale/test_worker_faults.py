"""A worker killed in the middle of an ingest: a clear error, nothing half-stored, and the
same ingest run again stores every event exactly once (as a serial ingest would)."""

from __future__ import annotations

import io
import os
import signal
import threading
from typing import Any

import pytest

from tests.ingest.helpers import gtc_runs, jsonl
from tracelake.config import Settings
from tracelake.errors import TracelakeError
from tracelake.ingest import Ingestor
from tracelake.ingest import workers as worker_pools
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import Store


def _ingestor(store: Store, batch: int) -> Ingestor:
    key = load_pseudonym_key(store.url)
    settings = Settings(database_url=store.url, ingest_workers=2, batch_size=batch)
    return Ingestor(store, get_scrubber(key), key, settings)


@pytest.mark.slow
def test_sigkill_of_a_worker_mid_ingest_then_a_rerun_stores_everything_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracelake.ingest import ingestor as ingest_module

    monkeypatch.setattr(ingest_module, "CHUNKS_BEFORE_WORKERS", 0)
    events = [e for _ in range(6) for run in gtc_runs() for e in run]
    envelopes: list[dict[str, Any]] = [
        {"type": "runner.event", "run_id": f"r-{i // 20}", "seq": i % 20 + 1, "event": e}
        for i, e in enumerate(events)
    ]
    data = jsonl(envelopes)
    ingestor = _ingestor(store, batch=25)
    ingestor.ingest(io.BufferedReader(io.BytesIO(jsonl(envelopes[:3]))), "warm.jsonl")
    pool = worker_pools._POOLS[2]
    victims = list(pool._processes)  # the started worker processes
    assert victims

    seen = []

    def on_read(size: int) -> None:
        seen.append(size)
        if len(seen) == 2:  # well inside the input: chunks are in flight, some appended
            threading.Timer(0.0, os.kill, (victims[0], signal.SIGKILL)).start()

    assert len(envelopes) > 2 * ingest_module.CHUNK_LINES  # chunks after the second
    with pytest.raises(TracelakeError, match="worker process died"):
        ingestor.ingest(io.BufferedReader(io.BytesIO(data)), "in.jsonl", on_read=on_read)
    partial = store.stats()["events"]
    assert partial < len(envelopes)

    report = ingestor.ingest(io.BufferedReader(io.BytesIO(data)), "in.jsonl")  # a fresh pool
    assert report.quarantined_total == 0
    assert report.appended + report.duplicates == len(envelopes)
    stored = list(store.iter_all())
    assert len(stored) == len(envelopes)
    assert [(e.run_id, e.seq) for e in stored if e.run_id.startswith("r-")] == sorted(
        ((e["run_id"], e["seq"]) for e in envelopes),
        key=lambda k: (int(k[0][2:]), k[1]),
    )
