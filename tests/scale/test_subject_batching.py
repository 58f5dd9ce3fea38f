"""New subjects' secrets are created in one statement per chunk (provisional secrets, then
settled); a subject that already had a secret makes the chunk scrub again with it, so what is
stored never depends on which process met a subject first (both backends)."""

from __future__ import annotations

import sqlalchemy as sa

from tests.ingest.helpers import gtc_runs, ingest_bytes, jsonl
from tracelake.scrub import load_pseudonym_key
from tracelake.store import Store
from tracelake.store import subject_secrets as subjects


def _fresh_process_state() -> None:
    """What a new process starts with: no cached secrets, no memoised pseudonyms."""
    subjects.dispose_all()
    from tracelake.scrub import policy

    with policy._META_LOCK:
        policy._META_CACHE.clear()


def _rows(store: Store) -> list[tuple[object, ...]]:
    with store.reading() as conn:
        q = "SELECT run_id, seq, content_hash FROM events ORDER BY position"
        return [tuple(r) for r in conn.execute(sa.text(q))]


def test_secrets_are_settled_per_chunk_and_known_subjects_rescrubbed(store: Store) -> None:
    events = [e for run in gtc_runs() for e in run]
    _fresh_process_state()
    first = ingest_bytes(store, jsonl(events))
    assert first.appended == len(events)
    with store.reading() as conn:
        n = conn.execute(sa.text("SELECT count(*) FROM subject_secrets")).scalar_one()
    assert n > 0
    stored = _rows(store)
    # a new process meets every subject again: provisional secrets lose to the stored ones,
    # the chunk is scrubbed again, and every event is recognised as already stored
    _fresh_process_state()
    again = ingest_bytes(store, jsonl(events))
    assert (again.appended, again.duplicates, again.quarantined_total) == (0, len(events), 0)
    assert _rows(store) == stored
    with store.reading() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM subject_secrets")).scalar_one() == n


def test_settle_reports_a_known_subject_and_keeps_its_stored_secret(store: Store) -> None:
    key = load_pseudonym_key(store.url)
    _fresh_process_state()
    s = subjects.secrets_for(key, store.url)
    known = s.secret_for("customer-1")  # stored at once (not deferred)
    _fresh_process_state()
    s = subjects.secrets_for(key, store.url)
    s.defer()
    provisional = s.secret_for("customer-1")
    new = s.secret_for("customer-2")
    assert provisional != known
    assert s.settle() is False  # customer-1 had a secret: scrub again
    assert (s.conflicts, s.deferred) == (1, 2)  # the ingest goes one by one only past 1/4
    assert s.secret_for("customer-1") == known
    assert s.secret_for("customer-2") == new  # stored as created
    s.defer()
    s.secret_for("customer-3")
    assert s.settle() is True
    _fresh_process_state()
    s = subjects.secrets_for(key, store.url)
    assert s.lookup("customer-3") is not None
