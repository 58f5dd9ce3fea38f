"""Every ingest test runs serially (1: the main process prepares the lines) and in parallel
(2 worker processes): ordering, idempotency and quarantine must be exactly the same."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ingest import helpers


@pytest.fixture(autouse=True, params=[1, 2], ids=["serial", "workers2"])
def ingest_workers(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[int]:
    from tracelake.ingest import ingestor

    helpers.WORKERS[0] = int(request.param)
    # Small test inputs must reach the workers too (by default the first chunks stay here),
    # in chunks small enough that runs straddle them.
    monkeypatch.setattr(ingestor, "CHUNKS_BEFORE_WORKERS", 0)
    monkeypatch.setattr(ingestor, "CHUNK_LINES", 7)
    yield int(request.param)
    helpers.WORKERS[0] = 1
