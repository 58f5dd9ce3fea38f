"""The fast path a producer can call (pipeline.encode_event) stores exactly what the NewEvent
path stores: same payload bytes, content hash, columns and redaction report."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.ingest.helpers import gtc_runs
from tracelake.admission import encode_event, new_event, scrub
from tracelake.runners import classify
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import Store
from tracelake.store.records import EncodedEvent


def test_encode_event_equals_the_new_event_path_and_appends(store: Store) -> None:
    key = load_pseudonym_key(store.url)
    scrubber = get_scrubber(key)
    now = datetime.now(UTC)
    run = gtc_runs()[1]
    fast, slow = [], []
    for seq, raw in enumerate(run, 1):
        inbound = classify(dict(raw))
        scrubbed = scrub(scrubber, inbound)
        fast.append(encode_event(inbound, scrubbed, "fast", seq, now, store))
        slow.append(new_event(inbound, scrubbed, "slow", seq, now))
    encoded_slow = store.encode(slow)
    assert all(isinstance(e, EncodedEvent) for e in fast)
    for f, s in zip(fast, encoded_slow, strict=True):
        assert (f.payload_json, f.content_hash, f.redactions_json, f.type, f.tool) == (
            s.payload_json,
            s.content_hash,
            s.redactions_json,
            s.type,
            s.tool,
        )
    assert store.append(fast).appended == len(run)
    assert store.append(slow).appended == len(run)
    a, b = store.run_events("fast"), store.run_events("slow")
    assert [(e.payload, e.redactions) for e in a] == [(e.payload, e.redactions) for e in b]
