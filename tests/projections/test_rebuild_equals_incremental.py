"""Rebuild == incremental for EVERY projection in the registry, under random batching.

Hypothesis chooses which runs (real PlanRunner runs, the agentlane samples, promotion decision
runs, and a long run of many steps), how they interleave, how the log grows (append chunks),
how the engine cuts it (batch sizes, batches per catch-up) and when a projector starts cold
(a new engine: no cached folds, as in a new process) or a second projector takes over (its
cached folds are behind the checkpoints), with a fold cache small enough to evict. The incremental tables must equal a
rebuild from zero. The snapshot lists the tables of every projection the registry has, and a
test checks that every derived table of the schema belongs to one, so a new projection cannot
be left out.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines import promote as job
from pipelines.promotion_policy import Policy
from tests.ingest.helpers import agentlane_bytes, ingest_bytes
from tests.projections.helpers import demo_lines
from tracelake.projections import ProjectionEngine, default_projections
from tracelake.store import NewEvent, Store, open_store
from tracelake.store.records import StoredEvent
from tracelake.store.schema import metadata

# The store's own tables: the log, its interned redaction reports and what guards it
# (chain, erasure, retention). Not derived.
LOG_TABLES = {
    "events",
    "quarantine",
    "projection_checkpoints",
    "event_chain",
    "verify_checkpoints",
    "subject_secrets",
    "erasures",
    "retention_guard",
    "chain_anchors",
    "chain_removed",
    "redaction_reports",
    "trace_contexts",
}
_counter = itertools.count()


def registry_tables() -> list[sa.Table]:
    return [t for p in default_projections() for t in p.tables]


def snapshot(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of every registered projection, rows in primary-key order."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with store.reading() as conn:
        for table in registry_tables():
            order = list(table.primary_key.columns)
            out[table.name] = [tuple(r) for r in conn.execute(sa.select(table).order_by(*order))]
    return out


def test_every_derived_table_belongs_to_a_registered_projection() -> None:
    derived = {t.name for t in metadata.sorted_tables} - LOG_TABLES
    assert derived == {t.name for t in registry_tables()}


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[StoredEvent]]:
    """Scrubbed, stored runs to copy: demo runs, agentlane runs, decision runs."""
    path: Path = tmp_path_factory.mktemp("templates") / "t.db"
    url = f"sqlite:///{path}"
    store = open_store(url)
    store.upgrade()
    ingest_bytes(store, b"".join(demo_lines("tpl")), origin="demo.jsonl")
    ingest_bytes(store, agentlane_bytes(), origin="agentlane.jsonl")
    job.run(store, Policy(auto_promote=True))
    runs: dict[str, list[StoredEvent]] = {}
    for e in store.iter_all():
        runs.setdefault(e.run_id, []).append(e)
    store.dispose()
    return runs


def long_run(template: list[StoredEvent], steps: int) -> list[StoredEvent]:
    """A run of ``steps`` started/completed pairs between its plan.started and its end."""
    start = [e for e in template if e.type == "plan.started"]
    started = next(e for e in template if e.type == "step.started")
    completed = next(e for e in template if e.type == "step.completed")
    end = [e for e in template if e.type in ("plan.completed", "plan.aborted")]
    body = []
    for i in range(steps):
        for e in (started, completed):
            payload = {**e.payload, "step_id": f"s{i}", "tool": f"tool{i % 7}"}
            body.append(replace(e, payload=payload, step_id=f"s{i}"))
    return [*start, *body, *end]


def renamed(events: list[StoredEvent], prefix: str) -> list[NewEvent]:
    out = []
    for seq, e in enumerate(events, 1):
        run_id, payload = f"{prefix}{e.run_id}", e.payload
        if e.run_id.startswith("suggestion:"):
            run_id = f"suggestion:{prefix}{e.run_id.removeprefix('suggestion:')}"
            payload = copy.deepcopy(payload)
            payload["suggestion"]["id"] = run_id.removeprefix("suggestion:")
            payload["suggestion_id"] = payload["suggestion"]["id"]
        out.append(
            NewEvent(
                run_id=run_id,
                seq=seq,
                type=e.type,
                source=e.source,
                payload=payload,
                recorded_at=e.recorded_at,
                redactions=e.redactions,
                event_id=f"{run_id}#{seq}",
                plan_id=e.plan_id,
                step_id=e.step_id,
                tool=e.tool,
                collection_id=e.collection_id,
            )
        )
    return out


def interleave(runs: list[list[NewEvent]], rng: random.Random) -> Iterator[NewEvent]:
    """Runs progressing concurrently: each run's own order is kept."""
    queues = [list(r) for r in runs if r]
    while queues:
        q = rng.choice(queues)
        yield q.pop(0)
        if not q:
            queues.remove(q)


@pytest.mark.slow
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    picks=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=14),
    long_steps=st.sampled_from([0, 0, 40, 300]),
    appends=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=8),
    batches=st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=8),
    per_catch_up=st.integers(min_value=1, max_value=4),
    switch=st.lists(st.sampled_from(["keep", "new", "other"]), min_size=1, max_size=8),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    cache_runs=st.sampled_from([1, 3, 100_000]),
    cache_finished=st.sampled_from([0, 2, 5_000]),
)
def test_rebuild_equals_incremental_for_every_projection(
    store: Store,
    templates: dict[str, list[StoredEvent]],
    picks: list[int],
    long_steps: int,
    appends: list[int],
    batches: list[int],
    per_catch_up: int,
    switch: list[str],
    seed: int,
    cache_runs: int,
    cache_finished: int,
) -> None:
    names = sorted(templates)
    prefix = f"x{next(_counter)}-"
    chosen = [templates[names[i % len(names)]] for i in picks]
    if long_steps:
        gtc = next(r for n, r in sorted(templates.items()) if n.endswith("order_detail"))
        chosen.append([replace(e, run_id="long") for e in long_run(gtc, long_steps)])
    runs = [renamed(r, f"{prefix}{i}-") for i, r in enumerate(chosen)]
    log = list(interleave(runs, random.Random(seed)))

    engines = [ProjectionEngine(store), ProjectionEngine(store)]
    engine = engines[0]
    pos = 0
    for step in itertools.count():
        if pos >= len(log):
            break
        size = appends[step % len(appends)]
        store.append(log[pos : pos + size])
        pos += size
        action = switch[step % len(switch)]
        if action == "new":  # no cached folds: a projector in a new process
            engines[engines.index(engine)] = engine = ProjectionEngine(store)
        elif action == "other":  # a second projector: its cached folds are behind the log
            engine = engines[1 - engines.index(engine)]
        engine.cache_runs = cache_runs  # a small cache evicts folds: re-read from the log
        engine.cache_finished = cache_finished
        engine.batch_size = batches[step % len(batches)]
        engine.catch_up(max_batches=per_catch_up)
    engine.batch_size = 97
    engine.catch_up()
    incremental = snapshot(store)
    assert any(incremental.values())

    ProjectionEngine(store, batch_size=5000).rebuild()
    assert snapshot(store) == incremental
