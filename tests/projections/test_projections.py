"""Projections over real runner events, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Connection

from tests.ingest.helpers import ingest_bytes
from tests.projections.helpers import demo_lines, load_corpus, snapshot
from tracelake.demo import scenarios
from tracelake.projections import Projection, ProjectionEngine, default_projections
from tracelake.runners.run_model import RunFold
from tracelake.store import Store

# scenario -> (success, failure_reason, failure_stage, failed_tool)
EXPECTED: dict[str, tuple[bool, str | None, str | None, str | None]] = {
    "order_detail": (True, None, None, None),
    "shipment": (True, None, None, None),
    "binding_missing": (False, "binding_failed", "bind_request", "getOrderDetail"),
    "auth_403": (False, "auth_failed", "execute", "getCustomer"),
    "auth_401": (False, "auth_failed", "execute", "getCustomer"),
    "rate_limited_429": (False, "http_4xx", "execute", "searchOrders"),
    "server_503_retried": (True, None, None, None),
    "server_500_exhausted": (False, "http_5xx", "execute", "getOrderDetail"),
    "timeout": (False, "timeout", "execute", "getShipment"),
    "network_error": (False, "network_error", "execute", "getShipment"),
    "skip_unconsumed": (True, None, None, None),
    "repaired": (True, None, None, None),
    "coerced": (True, None, None, None),
    "binding_repaired": (True, None, None, None),
}


def rows(store: Store, sql: str, **params: Any) -> list[Any]:
    with store.reading() as conn:
        return list(conn.execute(sa.text(sql), params).all())


@pytest.fixture
def projected(store: Store) -> Store:
    load_corpus(store)
    ProjectionEngine(store).catch_up()
    return store


def test_demo_corpus_one_learning_record_per_run_with_the_right_outcome(projected: Store) -> None:
    assert {s.name for s in scenarios()} == set(EXPECTED)
    found = {
        r.run_id: r
        for r in rows(
            projected,
            "SELECT run_id, success, failure_reason, failure_stage, failed_tool, collection_id"
            " FROM v_learning_records WHERE source = 'graph_tool_call'",
        )
    }
    assert set(found) == {f"run-{n}" for n in EXPECTED}
    for name, (success, reason, stage, tool) in EXPECTED.items():
        r = found[f"run-{name}"]
        assert (bool(r.success), r.failure_reason, r.failure_stage, r.failed_tool) == (
            success,
            reason,
            stage,
            tool,
        ), name
        assert r.collection_id == "orders-api"


def test_run_counts_and_status(projected: Store) -> None:
    got = {
        r.run_id: r
        for r in rows(
            projected,
            "SELECT run_id, status, plan_ids, retry_count, skip_count, repair_count,"
            " coercion_count, binding_repair_count, step_count FROM v_runs",
        )
    }
    assert got["run-server_503_retried"].retry_count == 2
    assert got["run-server_500_exhausted"].retry_count == 2
    assert got["run-skip_unconsumed"].skip_count == 1
    assert got["run-repaired"].repair_count == 1
    assert got["run-coerced"].coercion_count == 1
    assert got["run-binding_repaired"].binding_repair_count == 1
    plan_ids = got["run-repaired"].plan_ids
    plan_ids = plan_ids if isinstance(plan_ids, list) else json.loads(plan_ids)
    assert plan_ids == ["plan-repaired", "plan-repaired-r1"]
    for name, (success, *_rest) in EXPECTED.items():
        assert got[f"run-{name}"].status == ("Success" if success else "Failed")


def test_failure_taxonomy_rows(projected: Store) -> None:
    got = rows(
        projected,
        "SELECT run_id, event_type, reason, stage, retryable, http_status FROM v_failure_taxonomy"
        " WHERE source = 'graph_tool_call' ORDER BY position",
    )
    by_run: dict[str, list[Any]] = {}
    for r in got:
        by_run.setdefault(r.run_id, []).append(r)
    exhausted = by_run["run-server_500_exhausted"]
    assert [r.event_type for r in exhausted] == [
        "step.retrying",
        "step.retrying",
        "step.failed",
        "plan.aborted",
    ]
    assert {r.reason for r in exhausted} == {"http_5xx"}
    assert [r.event_type for r in by_run["run-server_503_retried"]] == ["step.retrying"] * 2
    skip = by_run["run-skip_unconsumed"]
    assert [(r.event_type, r.reason, r.http_status) for r in skip] == [
        ("step.skipped", "http_5xx", 502)
    ]
    assert {r.http_status for r in by_run["run-rate_limited_429"]} == {429}
    assert all(bool(r.retryable) for r in by_run["run-rate_limited_429"])
    assert not any(bool(r.retryable) for r in by_run["run-auth_403"])
    for name in ("order_detail", "shipment", "coerced", "binding_repaired"):
        assert f"run-{name}" not in by_run


def test_binding_repair_evidence_one_row_per_event(projected: Store) -> None:
    (n,) = rows(projected, "SELECT COUNT(*) FROM events WHERE type = 'binding.repaired'")[0]
    ev = rows(
        projected,
        "SELECT run_id, tool, field_name, recovered_path, run_completed, promotion_status"
        " FROM v_binding_repair_evidence",
    )
    assert len(ev) == n == 1
    r = ev[0]
    assert (r.run_id, r.tool, r.field_name, r.recovered_path, bool(r.run_completed)) == (
        "run-binding_repaired",
        "getShipment",
        "orderNo",
        "s1.result.order.orderNo",
        True,
    )
    assert r.promotion_status == "unreviewed"  # no decision yet: `tracelake promote` decides
    cand = rows(
        projected, "SELECT observations, successes, failures FROM binding_repair_candidates"
    )
    assert [tuple(c) for c in cand] == [(1, 1, 0)]


def test_binding_candidates_become_promotable_after_two_successes(store: Store) -> None:
    from pipelines import promote
    from pipelines.promotion_policy import Policy

    for prefix in ("a", "b"):
        lines = [ln for ln in demo_lines(prefix) if b"binding_repaired" in ln]
        ingest_bytes(store, b"".join(lines), origin=f"{prefix}.jsonl")
        ProjectionEngine(store).catch_up()
    cand = rows(store, "SELECT observations, successes FROM binding_repair_candidates")
    assert [tuple(c) for c in cand] == [(2, 2)]
    promote.run(store, Policy())
    ev = rows(store, "SELECT promotion_status, suggestion_id FROM v_binding_repair_evidence")
    assert len(ev) == 2 and {e.promotion_status for e in ev} == {"promotable"}
    (status,) = rows(store, "SELECT status FROM suggestions WHERE id = :i", i=ev[0].suggestion_id)
    assert status == ("promotable",)  # the one source of truth the view reads


def test_coercion_evidence(projected: Store) -> None:
    got = rows(
        projected,
        "SELECT tool, field_name, rule FROM coercion_evidence ORDER BY position, change_index",
    )
    assert [tuple(r) for r in got] == [
        ("listClaims", "state", "enum"),
        ("listClaims", "page", "cast"),
    ]


def test_agentlane_samples(projected: Store) -> None:
    recs = rows(
        projected,
        "SELECT run_id, success, failure_reason, failed_tool FROM v_learning_records"
        " WHERE source = 'agentlane'",
    )
    assert len(recs) == 12  # one per root run
    failed = [r for r in recs if not r.success]
    assert len(failed) == 1
    assert failed[0].failed_tool == "call_partner_api"  # started, never ended
    tool_failures = {
        (r.tool, r.reason, r.error_kind)
        for r in rows(
            projected,
            "SELECT tool, reason, error_kind FROM v_failure_taxonomy"
            " WHERE source = 'agentlane' AND event_type = 'tool_end'",
        )
    }
    assert ("fetch_statement", "timeout", "timeout") in tool_failures
    assert ("update_crm", "auth_failed", None) in tool_failures
    assert ("charge_card", "unknown", "card_declined") in tool_failures  # stored, not dropped
    (roots,) = rows(
        projected, "SELECT COUNT(*) FROM v_failure_taxonomy WHERE event_type = 'agent_end'"
    )[0]
    assert roots == 1


def test_query_family_matches_graph_tool_call(projected: Store) -> None:
    from graph_tool_call.learning import normalize_query_family, stable_hash

    got = rows(
        projected,
        "SELECT run_id, goal, query_family, query_fingerprint FROM v_learning_records"
        " WHERE source = 'graph_tool_call'",
    )
    raw_goals = {f"run-{s.name}": s.goal for s in scenarios()}
    compared = 0
    for r in got:
        if r.goal != raw_goals[r.run_id]:
            continue  # the scrubber changed this goal: grouped on its scrubbed form
        family = normalize_query_family(raw_goals[r.run_id])
        assert (r.query_family, r.query_fingerprint) == (family, stable_hash(family))
        compared += 1
    assert compared >= 10


def test_tool_latency_view(projected: Store) -> None:
    got = {
        r.tool: r
        for r in rows(
            projected, "SELECT tool, calls, failures, p50_ms, p95_ms, p99_ms FROM v_tool_latency"
        )
    }
    # getOrderDetail: 7 completed calls across scenarios + failed attempts (503 x2, 500 x3,
    # the repaired 500); its binding failure never called the tool.
    assert got["getOrderDetail"].failures == 6
    assert got["searchOrders"].failures == 1
    assert got["getOrderDetail"].p50_ms is not None
    assert got["fetch_statement"].failures == 1


def test_percentiles_nearest_rank(store: Store) -> None:
    with store.writing() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO tool_calls (position, run_id, source, tool, ok, duration_ms)"
                " VALUES (:p, 'r', 's', 't', :ok, :d)"
            ),
            [{"p": i, "ok": True, "d": float(i)} for i in range(1, 101)],
        )
    (r,) = rows(store, "SELECT calls, p50_ms, p95_ms, p99_ms FROM v_tool_latency")
    assert tuple(r) == (100, 50.0, 95.0, 99.0)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=12),
    split=st.integers(min_value=0, max_value=81),
)
def test_rebuild_equals_incremental(store: Store, sizes: list[int], split: int) -> None:
    """Catch up in random batch sizes, with the log growing mid-run, then compare with a
    rebuild from zero."""
    lines = demo_lines(f"h{len(sizes)}-{split}")
    engine = ProjectionEngine(store)
    engine.reset()
    ingest_bytes(store, b"".join(lines[:split]), origin="first.jsonl")
    for size in sizes:
        engine.batch_size = size
        engine.catch_up(max_batches=1)
    ingest_bytes(store, b"".join(lines[split:]), origin="second.jsonl")
    for size in sizes:
        engine.batch_size = size
        engine.catch_up(max_batches=2)
    engine.batch_size = 37
    engine.catch_up()
    incremental = snapshot(store)
    engine.batch_size = 5000
    engine.rebuild()
    assert snapshot(store) == incremental


class Crash(Exception):
    pass


class CrashAfterWrite(Projection):
    """Wraps a projection: writes its rows, then raises before the checkpoint is saved."""

    def __init__(self, inner: Projection, crash_on: int) -> None:
        self.inner, self.crash_on, self.calls = inner, crash_on, 0
        self.name = inner.name  # type: ignore[misc]
        self.tables = inner.tables  # type: ignore[misc]

    def apply(self, conn: Connection, runs: Any) -> None:
        self.inner.apply(conn, runs)
        self.calls += 1
        if self.calls == self.crash_on:
            raise Crash("injected between the read-model write and the checkpoint")


def test_crash_between_rows_and_checkpoint_neither_skips_nor_double_counts(store: Store) -> None:
    load_corpus(store, agentlane=False)
    # learning_records (second) crashes in the third batch, after runs (first) wrote its rows
    # and its own rows are written: the whole batch must roll back
    projections = [
        CrashAfterWrite(p, crash_on=3 if p.name == "learning_records" else 0)
        for p in default_projections()
    ]
    engine = ProjectionEngine(store, projections, batch_size=10)
    with pytest.raises(Crash):
        engine.catch_up()
    # both earlier batches committed; the third left neither rows nor checkpoints behind
    assert set(engine.checkpoints().values()) == {20}
    (n_runs,) = rows(store, "SELECT COUNT(*) FROM runs")[0]
    assert n_runs == len({r for r in rows(store, "SELECT run_id FROM events WHERE position <= 20")})
    engine.catch_up()  # recover: re-applies the batch that crashed
    after_crash = snapshot(store)
    ProjectionEngine(store).rebuild()
    assert snapshot(store) == after_crash
    (retries,) = rows(store, "SELECT SUM(retry_count) FROM runs")[0]
    assert retries == 4  # 503 retried twice + 500 retried twice, counted once


def test_checkpoint_and_rows_are_one_transaction_per_projection(store: Store) -> None:
    load_corpus(store, agentlane=False)
    engine = ProjectionEngine(store, batch_size=1000)
    result = engine.catch_up(["runs"])
    top = store.max_position()
    assert result.positions == {"runs": top}
    assert engine.checkpoints()["learning_records"] == 0
    (n,) = rows(store, "SELECT COUNT(*) FROM learning_records")[0]
    assert n == 0
    engine.catch_up()
    assert set(engine.checkpoints().values()) == {top}


def test_open_run_is_updated_as_events_arrive(store: Store) -> None:
    lines = [ln for ln in demo_lines() if b'"run-server_503_retried"' in ln]
    engine = ProjectionEngine(store)
    ingest_bytes(store, b"".join(lines[:5]), origin="a.jsonl")
    engine.catch_up()
    (r,) = rows(store, "SELECT status, finished, retry_count FROM runs")
    assert (r.status, bool(r.finished), r.retry_count) == ("Running", False, 1)
    assert rows(store, "SELECT * FROM learning_records") == []
    ingest_bytes(store, b"".join(lines[5:]), origin="b.jsonl")
    engine.catch_up()
    (r,) = rows(store, "SELECT status, finished, retry_count FROM runs")
    assert (r.status, bool(r.finished), r.retry_count) == ("Success", True, 2)
    assert len(rows(store, "SELECT * FROM learning_records")) == 1


def test_unknown_projection_name_says_what_exists(store: Store) -> None:
    from tracelake.errors import ConfigError

    with pytest.raises(ConfigError, match="known projections: runs"):
        ProjectionEngine(store).catch_up(["nope"])


def test_fold_is_pure(projected: Store) -> None:
    from tracelake.projections.fold import fold

    events = projected.run_events("run-repaired")
    a, b = fold(events), fold(list(events))
    assert isinstance(a, RunFold)
    assert (a.plan_ids, a.tools, a.status) == (b.plan_ids, b.tools, b.status)


def readme_queries() -> list[str]:
    from tests.conftest import REPO

    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("Example queries (both backends):", 1)[1].split("```sql", 1)[1]
    block = block.split("```", 1)[0]
    body = "\n".join(ln for ln in block.splitlines() if not ln.strip().startswith("--"))
    return [q.strip() for q in body.split(";") if q.strip()]


def test_readme_example_queries_run(projected: Store) -> None:
    queries = readme_queries()
    assert len(queries) == 5
    for q in queries:
        assert rows(projected, q), q


def test_selected_target_is_frozen_when_the_run_finishes(store: Store) -> None:
    """An event after plan.completed does not change what the learning record learned."""
    import json

    from tests.ingest.helpers import gtc_runs, ingest_bytes
    from tracelake.projections import ProjectionEngine
    from tracelake.store.schema import learning_records as lr

    run = gtc_runs()[0]
    late = {**next(e for e in run if e["type"] == "step.completed"), "tool": "lateTool"}
    lines = [{"type": "runner.event", "run_id": "late-run", "event": e} for e in [*run, late]]
    ingest_bytes(store, b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    ProjectionEngine(store).catch_up()
    with store.reading() as conn:
        target = conn.execute(
            sa.select(lr.c.selected_target).where(lr.c.run_id == "late-run")
        ).scalar()
    assert target == "getOrderDetail"
