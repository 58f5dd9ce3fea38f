"""The live lookup matches: a runner's raw goal, passed through ``learning_query``, gets
graph-tool-call's fingerprint of the goal tracelake stored, so approved suggestions fire.

Goals are built with Faker (fresh values each run; the seed is printed on failure) and the
runs go through graph-tool-call's real PlanRunner and the normal ingest path."""

from __future__ import annotations

import json
import random
from dataclasses import asdict, replace

import pytest
import sqlalchemy as sa
from faker import Faker
from graph_tool_call.learning import (
    apply_learning_suggestions,
    normalize_query_family,
    stable_hash,
)

from pipelines import promote as job
from pipelines.promotion_policy import Policy
from tests.ingest.helpers import ingest_bytes
from tracelake.demo import run_scenario, scenarios
from tracelake.learning import learning_fingerprint, learning_query
from tracelake.projections import ProjectionEngine
from tracelake.promotion import review as sug
from tracelake.scrub import get_scrubber
from tracelake.store import Store
from tracelake.store.schema import learning_records

LOCALES = ["ko_KR", "en_US", "en_GB", "de_DE", "fr_FR", "ja_JP", "es_ES", "pt_BR"]
SEED = random.randrange(2**32)


@pytest.fixture
def fake() -> Faker:
    print(f"faker seed: {SEED}")  # shown on failure: rerun with this seed to reproduce
    Faker.seed(SEED)
    return Faker(LOCALES)


def gtc(raw: str) -> str:
    """graph-tool-call's own fingerprint of a query."""
    return stable_hash(normalize_query_family(raw))


def personal_goal(fake: Faker) -> str:
    ko = fake["ko_KR"]
    return f"{ko.name()} 고객({ko.phone_number()}, {fake.email()})의 최근 주문 상세 보여줘"


def run_plans(store: Store, goals: list[str], collection: str, tag: str) -> list[str]:
    base = next(s for s in scenarios() if s.name == "order_detail")
    lines, run_ids = [], []
    for i, goal in enumerate(goals):
        run_id = f"{tag}-{i}"
        run_ids.append(run_id)
        events = run_scenario(replace(base, goal=goal), {"collection_id": collection})
        for seq, e in enumerate(events, 1):
            env = {"type": "runner.event", "run_id": run_id, "seq": seq, "event": asdict(e)}
            lines.append(json.dumps(env, ensure_ascii=False).encode() + b"\n")
    ingest_bytes(store, b"".join(lines))
    ProjectionEngine(store).catch_up()
    return run_ids


def test_a_raw_goal_with_personal_data_gets_the_boost_through_learning_query(
    store: Store, fake: Faker
) -> None:
    # three customers ask the same thing; the real PlanRunner runs it each time
    run_plans(store, [personal_goal(fake) for _ in range(3)], "orders-api", "learn")
    job.run(store, Policy())
    target = next(
        d
        for d in sug.list_suggestions(store, collection="orders-api")
        if d["type"] == "target_preference"
    )
    assert target["status"] == "promotable"
    sug.decide(store, get_scrubber(b"k" * 32), target["id"], "promoted", "ops", "looks right")
    block = sug.learning_block(store, "orders-api")["learning"]["suggestions"]

    new_goal = personal_goal(fake)  # a customer never seen before
    candidates = [
        {"name": "searchOrders", "score": 0.5},
        {"name": "getOrderDetail", "score": 0.5},
    ]
    raw = apply_learning_suggestions(new_goal, candidates, block, mode="promoted")
    via = apply_learning_suggestions(learning_query(new_goal), candidates, block, mode="promoted")
    assert gtc(new_goal) != target["query_fingerprint"]  # the raw goal misses ...
    assert raw["applied_count"] == 0
    assert gtc(learning_query(new_goal)) == target["query_fingerprint"]  # ... this one matches
    boosted = {c["name"]: c["score"] for c in via["candidates"]}
    assert via["applied_count"] >= 1 and boosted["getOrderDetail"] > 0.5
    assert new_goal not in json.dumps(block, ensure_ascii=False)


def test_fresh_goals_in_many_locales_reproduce_the_stored_fingerprint(
    store: Store, fake: Faker
) -> None:
    goals = []
    for i in range(40):
        locale = fake[LOCALES[i % len(LOCALES)]]
        goals.append(
            random.Random(SEED + i).choice(
                [
                    f"{locale.name()} 님 주문 {locale.random_int(10, 99999)} 배송 조회",
                    f"refund order for {locale.name()}, call {locale.phone_number()}",
                    f"{locale.email()} の注文を確認 {locale.address()}",
                    f"update {locale.name()} address to {locale.address()}",
                    f"send invoice to {locale.email()} card {fake.credit_card_number()}",
                    locale.sentence(nb_words=8),
                ]
            )
        )
    run_ids = run_plans(store, goals, "c", "fp")
    with store.reading() as conn:
        stored = dict(
            conn.execute(sa.select(learning_records.c.run_id, learning_records.c.query_fingerprint))
            .tuples()
            .all()
        )
    for run_id, goal in zip(run_ids, goals, strict=True):
        assert stored[run_id] == gtc(learning_query(goal)) == learning_fingerprint(goal), goal


def test_learning_query_does_not_depend_on_the_pseudonym_key(
    monkeypatch: pytest.MonkeyPatch, fake: Faker
) -> None:
    goals = [personal_goal(fake) for _ in range(5)]
    first = [learning_query(g) for g in goals]
    learning_query.cache_clear()
    monkeypatch.setenv("TRACELAKE_PSEUDONYM_KEY", "another-key-0123456789abcdef")
    assert [learning_query(g) for g in goals] == first
    assert all("[" in q for q in first)  # the personal data is gone
