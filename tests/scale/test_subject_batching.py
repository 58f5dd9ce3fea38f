"""New subjects' secrets are created in one statement per chunk (provisional secrets, then
settled); a line that used a subject which already had a secret is scrubbed again with it, so
what is stored never depends on which process met a subject first (both backends)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import sqlalchemy as sa

from tests.ingest.helpers import gtc_runs, ingest_bytes, jsonl
from tracelake.ingest.lines import Line
from tracelake.scrub import load_pseudonym_key
from tracelake.store import Store
from tracelake.store import subject_secrets as subjects


def _fresh_process_state() -> None:
    """What a new process starts with: no cached secrets, no memoised pseudonyms."""
    subjects.dispose_all()
    from tracelake.scrub import policy

    policy.forget_memoised()


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
    assert s.used == ["customer-1", "customer-2"]  # which lines used what: the ingest knows
    assert s.settle() == {"customer-1"}  # customer-1 had a secret: what used it scrubs again
    assert (s.conflicts, s.deferred) == (1, 2)
    assert s.secret_for("customer-1") == known
    assert s.secret_for("customer-2") == new  # stored as created
    s.defer()
    s.secret_for("customer-3")
    assert s.settle() == frozenset()
    _fresh_process_state()
    s = subjects.secrets_for(key, store.url)
    assert s.lookup("customer-3") is not None


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)  # jsonb arrives parsed


def _pseudonyms(texts: list[str]) -> set[str]:
    return {
        word[:24]
        for text in texts
        for word in text.replace('"', " ").split()
        if word.startswith("psn_")
    }


def test_only_lines_that_used_a_known_subject_change_and_memos_keep_no_provisional_one(
    store: Store,
) -> None:
    """One chunk mixes a subject another process stored first and a new one, both in
    trace_metadata (memoised across events) and in args: every event gets the stored
    secret's pseudonym for the known subject, the same as a process that looked it up."""
    key = load_pseudonym_key(store.url)

    def events(plan: str, user: str) -> list[dict[str, object]]:
        out = []
        for event in gtc_runs(plan)[0]:
            event["trace_metadata"] = {"user_id": user, "case_id": "c-1"}
            if "args_resolved" in event:
                event["args_resolved"] = {"user_id": user, "period": "7d"}
            out.append(event)
        return out

    _fresh_process_state()
    known = subjects.secrets_for(key, store.url).secret_for("member-known-7")
    expected = subjects.pseudonym_with(known, "member-known-7")
    _fresh_process_state()  # a new process: the subject is known only to the database
    data = events("a", "member-new-1") + events("b", "member-known-7") + events("c", "member-new-1")
    ingest_bytes(store, jsonl(data))
    with store.reading() as conn:
        q = "SELECT plan_id, payload FROM events ORDER BY position"
        by_plan: dict[str, list[str]] = {}
        for plan, payload in conn.execute(sa.text(q)):
            by_plan.setdefault(plan, []).append(_text(payload))
        q = "SELECT document FROM trace_contexts"
        contexts = [_text(r[0]) for r in conn.execute(sa.text(q))]
    args = {plan: _pseudonyms(texts) for plan, texts in by_plan.items()}
    assert args["b-order_detail"] == {expected}
    assert args["a-order_detail"] == args["c-order_detail"]
    assert len(args["a-order_detail"]) == 1 and expected not in args["a-order_detail"]
    # trace_metadata is stored apart from payload (interned): one context per subject
    assert _pseudonyms(contexts) == {expected} | args["a-order_detail"]


def test_a_rejected_line_is_quarantined_with_its_text_withheld_when_scrubbing_fails(
    store: Store,
) -> None:
    """A subject's secret cannot be created (the database refuses): the quarantine record of
    a bad line is still written, its text withheld, and the good lines are stored (an attack
    saw the whole ingest stop on the ScrubError)."""
    from tracelake.admission import SCRUB_FAILED_TEXT, quarantine_item
    from tracelake.errors import ScrubError
    from tracelake.scrub import Scrubber

    class Refusing(Scrubber):  # the real scrubber, whose secret lookups fail (as on an outage)
        def scrub_text(self, text: str, max_len: int | None = None) -> str:
            raise ScrubError("cannot read or create a subject's pseudonym secret")

    key = load_pseudonym_key(store.url)
    item = quarantine_item(
        Refusing(key),
        key,
        origin="x.jsonl",
        reason="not_json",
        detail="bad line of alice-7731",
        raw=b'{"type": "step.started", "user_id": "alice-7731", ',
        recorded_at=datetime.now(UTC),
        line_no=2,
    )
    assert (item.detail, item.preview) == (SCRUB_FAILED_TEXT, SCRUB_FAILED_TEXT)
    assert "alice" not in repr(item)


def test_safe_ids_made_with_the_process_secret_or_before_an_erasure_are_not_kept(
    store: Store,
) -> None:
    """Run ids pseudonymised while no subject secret could be had use this process's secret
    and are not memoised; after an erasure the memo of safe ids is dropped at the next chunk
    (an attack found 16,000 events after an erasure with the erased secret's run id)."""
    from tracelake.ingest.prepare import Preparer
    from tracelake.scrub import get_scrubber
    from tracelake.scrub.pseudonym import bind_key

    unreachable = bind_key(b"k" * 32, "postgresql+psycopg://postgres@127.0.0.1:9/none")
    preparer = Preparer(get_scrubber(unreachable), unreachable, "x", 1 << 20, 64)
    first = preparer.safe("run-alice@example.com")
    assert first is not None and first.startswith("psn_")
    assert "run-alice@example.com" not in preparer._safe_ids

    key = load_pseudonym_key(store.url)
    _fresh_process_state()
    preparer = Preparer(get_scrubber(key), key, "x", 1 << 20, 64)
    lines = [Line(1, jsonl([{"type": "plan.started", "plan_id": "p", "goal": "g"}])[:-1])]
    preparer.prepare(lines)
    made = preparer.safe("run-alice@example.com")
    assert preparer._safe_ids["run-alice@example.com"] == made
    subjects.secrets_for(key, store.url).forget()  # what refresh() does after an erasure
    preparer.prepare(lines)
    assert "run-alice@example.com" not in preparer._safe_ids
