"""The trace_metadata memo gives exactly what computing again would give, and marks the same
subjects used (the lines scrubbed again at settle), whatever happens between two events (a
chunk settles, another process stores a subject's secret first, an erasure), on a real store
(both backends): it never serves a pseudonym made with a provisional or an erased secret."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from faker import Faker
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracelake.scrub import load_pseudonym_key, policy
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
def test_a_memoised_result_is_what_computing_it_again_gives(
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
            memoised = _scrub(key, value, memo=True)
            fresh = _scrub(key, value, memo=False)
            assert memoised == fresh
    finally:
        secrets.settle()
