"""Erasure by crypto-shredding: find, erase, find again (0), new events get a new pseudonym,
a receipt is stored and an event appended, and neither carries personal data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from faker import Faker

from tests.ingest.helpers import ingest_bytes
from tests.lifecycle.helpers import envelopes, jsonl, subjects
from tracelake.lifecycle.erasure import erase, find
from tracelake.lifecycle.verify import verify
from tracelake.projections.runner import ProjectionEngine
from tracelake.scrub import load_pseudonym_key
from tracelake.store import Store
from tracelake.store import subject_secrets as subject_mod
from tracelake.store.subject_secrets import SubjectSecrets, pseudonym_with, subject_ref


def _dump(store: Store) -> str:
    """Everything in the database as text (a crude but complete dump)."""
    parts = []
    with store.reading() as conn:
        for table in sa.inspect(conn).get_table_names():
            for row in conn.execute(sa.text(f'SELECT * FROM "{table}"')):
                parts.append(repr(tuple(row)))
    return "\n".join(parts)


def _lookup(store: Store, key: bytes, value: str) -> bytes | None:
    secrets = SubjectSecrets(key, store.url)
    try:
        return secrets.lookup(value)
    finally:
        secrets.dispose()


def test_erase_then_find_returns_zero_and_new_events_get_a_new_pseudonym(
    store: Store, fake: Faker
) -> None:
    key = load_pseudonym_key(store.url)
    who = subjects(fake, 6)
    ingest_bytes(store, jsonl(envelopes(fake, who, 18, "a")))
    before = {w: find(store, key, w) for w in who}
    for w in who:  # 3 runs each; every run's step.started carries the pseudonym
        assert before[w].events == 3 and before[w].legacy_events == 0, w
        assert before[w].raw_value_events == 0, w  # the scrubber kept the value out
    target = who[0]
    secret = _lookup(store, key, target)
    assert secret is not None
    old_pseudonym = pseudonym_with(secret, target)
    assert old_pseudonym in _dump(store)

    receipt = erase(store, key, target)

    assert receipt["secret_deleted"] and receipt["events_unlinked"] == 3
    after = find(store, key, target)
    assert (after.events, after.legacy_events, after.has_secret) == (0, 0, False)
    for w in who[1:]:  # nobody else is touched
        assert find(store, key, w).events == 3
    # the key and the value are no longer enough: neither the key-only HMAC nor any secret
    dump = _dump(store)
    assert pseudonym_with(bytes(key), target) not in dump
    assert subject_ref(key, target) not in dump
    assert secret.hex() not in dump
    # new events for the subject get a new pseudonym
    ingest_bytes(store, jsonl(envelopes(fake, [target], 2, "b")))
    again = find(store, key, target)
    assert again.events == 2
    fresh = _lookup(store, key, target)
    assert fresh is not None and pseudonym_with(fresh, target) != old_pseudonym
    with store.reading() as conn:  # the old events are untouched (the log is never rewritten)
        still = [
            r[0]
            for r in conn.execute(sa.text("SELECT payload FROM events"))
            if old_pseudonym in (r[0] if isinstance(r[0], str) else json.dumps(r[0]))
        ]
    assert len(still) == before[target].events
    # the receipt and the event carry no personal data
    with store.reading() as conn:
        stored = conn.execute(sa.text("SELECT receipt FROM erasures")).scalar()
        event = conn.execute(
            sa.text("SELECT payload FROM events WHERE type = 'subject.erased'")
        ).scalar()
    for document in (stored, event):
        text = document if isinstance(document, str) else json.dumps(document)
        for needle in (target, old_pseudonym, subject_ref(key, target), secret.hex()):
            assert needle not in text
    assert verify(store, full=True).ok
    ProjectionEngine(store).catch_up()  # lifecycle events are not runs: projections skip them
    with store.reading() as conn:
        runs = conn.execute(sa.text("SELECT count(*) FROM runs")).scalar()
    assert runs == 18 + 2


@pytest.mark.parametrize("backend", ["sqlite"])
def test_sqlite_file_keeps_no_copy_of_the_erased_secret(store: Store, fake: Faker) -> None:
    key = load_pseudonym_key(store.url)
    who = subjects(fake, 3)
    ingest_bytes(store, jsonl(envelopes(fake, who, 3, "s")))
    secret = _lookup(store, key, who[1])
    assert secret is not None
    erase(store, key, who[1])
    store.dispose()
    path = Path(sa.make_url(store.url).database or "")
    for file in (path, Path(f"{path}-wal")):
        if file.exists():
            assert secret not in file.read_bytes(), file


def test_other_processes_stop_using_an_erased_secret(
    store: Store, fake: Faker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subject_mod, "REFRESH_SECONDS", 0.0)
    key = load_pseudonym_key(store.url)
    target = subjects(fake, 1)[0]
    elsewhere = SubjectSecrets(key, store.url)  # another process's cache
    first = elsewhere.secret_for(target)
    assert elsewhere.secret_for(target) == first
    erase(store, key, target)
    renewed = elsewhere.secret_for(target)
    assert renewed != first
    assert _lookup(store, key, target) == renewed
    elsewhere.dispose()


def test_unknown_subject_erasure_is_recorded_and_harmless(store: Store, fake: Faker) -> None:
    key = load_pseudonym_key(store.url)
    who = subjects(fake, 2)
    ingest_bytes(store, jsonl(envelopes(fake, who[:1], 2, "u")))
    receipt = erase(store, key, who[1])
    assert receipt["secret_deleted"] is False and receipt["events_unlinked"] == 0
    assert find(store, key, who[0]).events == 2
