"""``Ingestor.stop`` (what ``tracelake ingest`` calls on SIGTERM or Ctrl-C): the ingest under way
raises ``Stopped`` with what was appended before it stored, and an ``Ingestor`` used again
afterwards is not stopped (a fault attack: the stop stuck to the object, and every later ingest
on it stopped after its first batch)."""

from __future__ import annotations

import io
import signal

import pytest
import sqlalchemy as sa

from tests.ingest.helpers import gtc_runs, jsonl
from tracelake.config import Settings
from tracelake.ingest import Ingestor, IngestReport
from tracelake.ingest.call_guard import Stopped
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import Store


def _lines(tag: str, copies: int) -> bytes:
    return b"".join(jsonl(run) for i in range(copies) for run in gtc_runs(f"{tag}-{i}"))


def test_a_stopped_ingest_raises_and_the_next_one_on_the_same_ingestor_completes(
    store: Store,
) -> None:
    key = load_pseudonym_key(store.url)
    settings = Settings(database_url=store.url, ingest_workers=1, batch_size=50)
    ingestor = Ingestor(store, get_scrubber(key), key, settings)
    data = _lines("stop", 40)
    chunks = [0]

    def stop_on_the_third_chunk(_read: int) -> None:
        chunks[0] += 1
        if chunks[0] == 3:
            ingestor.stop(signal.SIGTERM)

    report = IngestReport()
    with pytest.raises(Stopped) as stopped:
        ingestor.ingest(
            io.BufferedReader(io.BytesIO(data)), "a.jsonl", report, stop_on_the_third_chunk
        )
    assert stopped.value.signum == signal.SIGTERM
    with store.reading() as conn:
        stored = conn.execute(sa.text("SELECT count(*) FROM events")).scalar_one()
    assert report.appended <= stored < data.count(b"\n")

    try:
        again = ingestor.ingest(io.BufferedReader(io.BytesIO(data)), "a.jsonl")
    except Stopped:  # a KeyboardInterrupt: it would end the whole test session
        pytest.fail("the next ingest on the same Ingestor was stopped too")
    with store.reading() as conn:
        stored = conn.execute(sa.text("SELECT count(*) FROM events")).scalar_one()
    assert stored == data.count(b"\n")  # completed, exactly once
    assert again.appended == stored - report.appended
