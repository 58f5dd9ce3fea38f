"""Memos of results made with provisional subject secrets (``scrub.replays``) replay exactly
what computing again would give, and mark the same subjects used, whatever happens between
(a chunk settles, another process stores a subject's secret first, an erasure), on a real
store (both backends)."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from faker import Faker
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracelake.scrub import load_pseudonym_key, policy, replays
from tracelake.scrub.pseudonym import subject_key
from tracelake.scrub.walk import Walker
from tracelake.store import Store
from tracelake.store import subject_secrets as subjects

# what happens to the secrets before an event (a chunk settles and the next one starts,
# another process stores a subject's secret first, an erasure elsewhere)
BEFORE = st.sampled_from(["nothing", "nothing", "next_chunk", "stored_elsewhere", "erase"])


def _metadata(user: str, case: str) -> dict[str, Any]:
    return {"user_id": user, "case_id": case, "tenant": "acme"}


def _scrub(
    key: bytes, value: dict[str, Any], *, memo: bool
) -> tuple[Any, Counter[str], dict[str, Any]]:
    """(result, subjects marked used, report size) of one trace_metadata scrub."""
    secrets = subjects.secrets_for(key, subjects_url(key))
    before = len(secrets.used)
    w = Walker(key)
    rule = policy.trace_metadata if memo else policy._trace_metadata
    out = rule(w, value, "trace_metadata")
    return out, Counter(secrets.used[before:]), w.report()


def _stored_elsewhere(key: bytes, url: str, user: str) -> bytes:
    """What another process does first: store the subject's secret (its own connection,
    closed after: a test making many must not hold the server's connections)."""
    other = subjects.SubjectSecrets(key, url)
    try:
        return other.secret_for(user)
    finally:
        other.dispose()


def subjects_url(key: bytes) -> str:
    return str(getattr(key, "url"))  # noqa: B009 - a bound key's database


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    steps=st.lists(st.tuples(BEFORE, st.integers(0, 1)), min_size=4, max_size=40),
)
def test_a_replayed_result_is_what_computing_it_again_gives(
    store: Store, seed: int, steps: list[tuple[str, int]]
) -> None:
    key = load_pseudonym_key(store.url)
    faker = Faker(["ko_KR", "en_US", "ja_JP", "de_DE"])
    faker.seed_instance(seed)
    tag = uuid.UUID(int=seed).hex[-8:]  # fresh subjects for every example
    users = [f"{faker.user_name()}-{tag}-{i}" for i in range(2)]
    cases = [faker.bothify("case-??-####") for _ in range(2)]
    secrets = subjects.secrets_for(key, store.url)
    policy.forget_memoised()
    secrets.defer()
    try:
        for before, i in steps:
            if before == "next_chunk":
                secrets.settle()
                secrets.defer()
            elif before == "stored_elsewhere":
                _stored_elsewhere(key, store.url, users[i])
            elif before == "erase":
                secrets.forget()  # what refresh() does after an erasure elsewhere
            value = _metadata(users[i], cases[i])
            replayed = _scrub(key, value, memo=True)
            fresh = _scrub(key, value, memo=False)
            assert replayed == fresh
    finally:
        secrets.settle()


def test_a_run_scrubs_its_trace_metadata_once_per_chunk_and_a_lost_secret_is_not_replayed(
    store: Store,
) -> None:
    """The case the replays exist for: every event of a run carries the same trace_metadata
    and its subject is new in the chunk. Computed once, replayed for the other events (each
    marked as using the subject); when the provisional secret loses at settle, the next lookup
    gives the stored secret's pseudonym."""
    key = load_pseudonym_key(store.url)
    user = f"{Faker().user_name()}-{uuid.uuid4().hex[:8]}"
    value = _metadata(user, "case-1")
    secrets = subjects.secrets_for(key, store.url)
    policy.forget_memoised()
    calls = Counter[str]()
    real = policy._trace_metadata

    def counted(w: Walker, v: Any, path: str) -> Any:
        calls["computed"] += 1
        return real(w, v, path)

    memo = policy.memoized(counted)
    secrets.defer()
    first = [memo(Walker(key), value, "trace_metadata") for _ in range(5)]
    assert calls["computed"] == 1
    assert secrets.used.count(user) == 5  # every line that replayed it is marked
    assert all(f == first[0] for f in first)
    stored_secret = _stored_elsewhere(key, store.url, user)  # another process, first
    assert secrets.settle() == {user}
    stored = subjects.pseudonym_with(stored_secret, user)
    after = memo(Walker(key), value, "trace_metadata")
    assert calls["computed"] == 2
    assert after["user_id"] == stored != first[0]["user_id"]


def test_what_used_a_secret_that_cannot_be_asked_again_is_not_kept() -> None:
    """Recordings nest; a secret of the process (no database) makes a result unreplayable."""
    derive_calls: list[str] = []

    def derive(key: bytes, text: str) -> bytes:
        derive_calls.append(text)
        return b"s-" + text.encode()

    memo: replays.Replays[str] = replays.Replays(derive, 2)
    outer = replays.start()
    inner = replays.start()
    replays.note("alice", b"s-alice")
    used_inner = replays.stop(inner)
    replays.note("bob", b"s-bob")
    used_outer = replays.stop(outer)
    assert used_inner == (("alice", b"s-alice"),)
    assert used_outer == (("alice", b"s-alice"), ("bob", b"s-bob"))
    memo.put("k", "result", used_outer)
    assert memo.get(b"key", "k") == "result" and derive_calls == ["alice", "bob"]
    memo.put("changed", "stale", (("carol", b"old secret"),))
    assert memo.get(b"key", "changed") is None and memo.get(b"key", "changed") is None
    outer = replays.start()
    replays.note_unreplayable()
    memo.put("unreplayable", "x", replays.stop(outer))
    assert memo.get(b"key", "unreplayable") is None
    for n in range(5):  # bounded
        memo.put(n, str(n), ())
    assert memo.get(b"key", 4) == "4" and memo.get(b"key", 0) is None
    assert subject_key(b"bare key 0123456789", "x") == b"bare key 0123456789"  # no secrets


_RACE = """
import random, sys, threading
from tracelake.scrub.pseudonym import bind_key
from tracelake.scrub.replays import Replays
sys.setswitchinterval(1e-6)
keys = [bind_key(b"k" * 32, "sqlite:///x") for _ in range(8)]  # equal, distinct objects
memo = Replays(lambda key, text: b"s", 64)
errors = []
def work(seed):
    rng = random.Random(seed)
    try:
        for _ in range(200_000):
            memo_key = ("trace_metadata", rng.choice(keys), "p", str(rng.randrange(200)).encode())
            op = rng.random()
            if op < 0.5:
                memo.put(memo_key, "v", (("a", b"s"),))
            elif op < 0.98:
                memo.get(keys[0], memo_key)
            else:
                memo.clear()
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print(len(errors), len(memo._entries) <= 64)
"""


def test_threads_sharing_a_memo_with_equal_keys_do_not_corrupt_it() -> None:
    """Four threads put, get and clear with memo keys whose BoundKeys are equal but distinct
    objects (compared in Python code, mid-insert): without the lock this crashed CPython
    (segmentation fault) in 2 of 3 runs of an attack. Run in its own interpreter."""
    import os

    from tests.interpreter import run_python

    assert run_python(_RACE, env=os.environ).split() == ["0", "True"]
