"""Promotion on a corpus of real graph-tool-call runs (the demo scenarios through the real
PlanRunner), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

import polars as pl
import pytest
import sqlalchemy as sa
from graph_tool_call.learning import (
    apply_learning_suggestions,
    normalize_query_family,
    stable_hash,
    summarize_learning_state,
)

from pipelines import io as job_io
from pipelines import promote as job
from pipelines.promotion_policy import Policy
from tests.ingest.helpers import ingest_bytes
from tracelake.demo import run_scenario, scenarios
from tracelake.projections import ProjectionEngine
from tracelake.promotion import review as sug
from tracelake.promotion.decisions import append_decisions
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import Store
from tracelake.store.schema import events, suggestions

SCENARIOS = {s.name: s for s in scenarios()}


def add_runs(store: Store, collection: str, names: list[str], tag: str) -> None:
    lines = []
    for i, name in enumerate(names):
        run_id = f"{collection}-{tag}-{i}-{name}"
        meta = {"collection_id": collection}
        for seq, e in enumerate(run_scenario(SCENARIOS[name], trace_metadata=meta), 1):
            env = {"type": "runner.event", "run_id": run_id, "seq": seq, "event": asdict(e)}
            lines.append(json.dumps(env, ensure_ascii=False).encode() + b"\n")
    ingest_bytes(store, b"".join(lines))


def by_target(store: Store, collection: str, kind: str = "target_preference") -> dict[str, Any]:
    docs = sug.list_suggestions(store, collection=collection)
    return {d["target"]: d for d in docs if d["type"] == kind}


def statuses(store: Store) -> dict[str, tuple[str, int]]:
    with store.reading() as conn:
        rows = conn.execute(
            sa.select(suggestions.c.id, suggestions.c.status, suggestions.c.version)
        )
        return {r.id: (r.status, r.version) for r in rows}


def test_derived_in_graph_tool_calls_shape_and_promotable_only_after_repeated_success(
    store: Store,
) -> None:
    add_runs(store, "orders-api", ["order_detail", "coerced", "binding_repaired"], "a")
    job.run(store, Policy())
    once = by_target(store, "orders-api")
    assert once["getOrderDetail"]["status"] == "suggested"  # one success is not enough
    doc = once["getOrderDetail"]
    family = normalize_query_family("최근 주문 상세 보여줘")
    assert doc["query_family"] == family and doc["query_fingerprint"] == stable_hash(family)
    basis = f"orders-api|{stable_hash(family)}|target_preference|getOrderDetail"
    assert doc["id"] == f"target_preference:{stable_hash(basis)}"  # graph-tool-call's id
    for key in ("id", "type", "collection_id", "query_family", "query_fingerprint", "target"):
        assert key in doc
    for key in ("status", "observations", "prior_failure_count", "evidence", "created_at"):
        assert key in doc
    kinds = {d["type"] for d in sug.list_suggestions(store)}
    assert kinds == {
        "target_preference",
        "plan_path",
        "data_flow_edge",
        "binding_repair",
        "enum_mapping_candidate",
    }
    edges = by_target(store, "orders-api", "data_flow_edge")
    edge = edges["getOrderDetail"]["edge"]
    assert edge["source"] == "searchOrders" and edge["data_flow"]["to_field"] == "orderNo"

    add_runs(store, "orders-api", ["order_detail", "coerced", "binding_repaired"], "b")
    report = job.run(store, Policy())
    assert report.changes.get("suggested -> promotable", 0) >= 5
    assert {d["status"] for d in sug.list_suggestions(store)} == {"promotable"}


def test_recent_failures_hold_a_suggestion_back(store: Store) -> None:
    # shipment succeeds twice, then times out / fails three times: 3 of 5 recent attempts failed
    add_runs(store, "orders-api", ["shipment", "shipment"], "ok")
    job.run(store, Policy())
    assert by_target(store, "orders-api")["getShipment"]["status"] == "promotable"
    add_runs(store, "orders-api", ["timeout", "network_error", "timeout"], "bad")
    job.run(store, Policy())
    held = by_target(store, "orders-api")["getShipment"]
    assert held["status"] == "suggested"
    assert held["evidence"]["recent_attempts"] == {"window": 50, "successes": 2, "failures": 3}
    assert held["prior_failure_count"] == 3
    # a window of the 2 most recent attempts sees only failures; of 10, a 0.6 ratio: both hold
    assert _status_with(store, Policy(max_attempts=2)) == "suggested"
    assert _status_with(store, Policy(max_recent_failure_ratio=0.6)) == "promotable"


def _status_with(store: Store, policy: Policy) -> str:
    derived = job.derive(
        job_io.read_learning_records(store),
        {},
        policy,
    )
    row = derived.filter(
        (derived["type"] == "target_preference") & (derived["target"] == "getShipment")
    )
    return str(row["policy_status"][0])


def test_collections_are_isolated(store: Store) -> None:
    add_runs(store, "orders-api", ["order_detail", "order_detail"], "a")
    add_runs(
        store, "claims-api", ["order_detail", "server_500_exhausted", "server_500_exhausted"], "b"
    )
    job.run(store, Policy())
    orders = by_target(store, "orders-api")["getOrderDetail"]
    claims = by_target(store, "claims-api")["getOrderDetail"]
    assert orders["id"] != claims["id"]
    assert orders["status"] == "promotable" and orders["prior_failure_count"] == 0
    assert claims["status"] == "suggested" and claims["observations"] == 1
    assert claims["prior_failure_count"] == 2
    job.run(store, Policy(), collection="orders-api")  # a one-collection run touches only it
    only = job.run(store, Policy(), collection="claims-api", dry_run=True)
    assert all(d.suggestion["collection_id"] == "claims-api" for d in only.decisions)


def test_reruns_are_no_ops_and_dry_run_appends_nothing(store: Store) -> None:
    add_runs(store, "orders-api", ["order_detail", "order_detail", "coerced"], "a")
    dry = job.run(store, Policy(), dry_run=True)
    assert dry.decisions and statuses(store) == {}
    first = job.run(store, Policy())
    assert first.appended == len(dry.decisions)
    with store.reading() as conn:
        count = conn.execute(sa.select(sa.func.count()).select_from(events)).scalar()
    second = job.run(store, Policy())
    assert second.decisions == [] and second.appended == 0
    with store.reading() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(events)).scalar() == count
    # the same decisions appended again (a crashed job retried) are duplicates
    assert append_decisions(store, first.decisions).appended == 0


def test_operator_decisions_are_scrubbed_events_and_rejected_is_never_promoted(
    store: Store,
) -> None:
    add_runs(store, "orders-api", ["order_detail", "coerced"], "a")
    job.run(store, Policy())
    scrubber = get_scrubber(load_pseudonym_key(store.url))
    target = by_target(store, "orders-api")["getOrderDetail"]
    reason = "wrong for VIP, call 010-2233-4455 or mail seoyeon.kim@example.co.kr"
    rejected = sug.decide(store, scrubber, target["id"], "rejected", "ops", reason)
    assert rejected["status"] == "rejected"
    assert "010-2233-4455" not in json.dumps(rejected, ensure_ascii=False)
    with store.reading() as conn:
        stored = conn.execute(sa.select(sa.cast(events.c.payload, sa.Text))).scalars().all()
    assert not any("seoyeon.kim@example.co.kr" in p or "010-2233-4455" in p for p in stored)
    add_runs(store, "orders-api", ["order_detail"] * 3, "b")  # more success
    job.run(store, Policy(auto_promote=True))
    assert by_target(store, "orders-api")["getOrderDetail"]["status"] == "rejected"
    with pytest.raises(sug.DecisionRefusedError):
        sug.decide(store, scrubber, target["id"], "promoted", "ops", "try anyway")
    history = sug.history(store, target["id"])
    assert [(h["from_status"], h["to_status"]) for h in history][:2] == [
        (None, "suggested"),
        ("suggested", "rejected"),
    ]
    assert history[1]["actor"] == "operator" and history[0]["decided_by"].startswith("policy:")


def test_auto_promote_and_rebuild_from_the_log_reproduces_every_status(store: Store) -> None:
    add_runs(store, "orders-api", ["order_detail", "binding_repaired", "coerced"], "a")
    job.run(store, Policy(auto_promote=True))
    assert {d["status"] for d in sug.list_suggestions(store)} == {"suggested"}
    add_runs(store, "orders-api", ["order_detail", "binding_repaired"], "b")
    job.run(store, Policy(auto_promote=True))
    scrubber = get_scrubber(load_pseudonym_key(store.url))
    enum = next(d for d in sug.list_suggestions(store) if d["type"] == "enum_mapping_candidate")
    sug.decide(store, scrubber, enum["id"], "rejected", "ops", "not a real mapping")
    before = statuses(store)
    assert {s for s, _ in before.values()} == {"promoted", "suggested", "rejected"}
    ProjectionEngine(store).rebuild()
    assert statuses(store) == before
    assert job.run(store, Policy(auto_promote=True)).decisions == []


def test_export_learning_round_trip_with_the_real_library(store: Store) -> None:
    add_runs(store, "orders-api", ["order_detail", "order_detail", "shipment", "shipment"], "a")
    job.run(store, Policy())
    scrubber = get_scrubber(load_pseudonym_key(store.url))
    detail = by_target(store, "orders-api")["getOrderDetail"]
    sug.decide(store, scrubber, detail["id"], "promoted", "ops", "checked")
    block = json.loads(json.dumps(sug.learning_block(store, "orders-api")))  # as exported
    learning = block["learning"]
    assert learning["promotion_policy"]["min_success_observations"] == 2
    # graph-tool-call's own summary of the exported block equals ours (attempts included)
    assert learning["summary"] == summarize_learning_state(learning)
    assert learning["summary"]["attempt_count"] == 4 and learning["summary"]["success_rate"] == 1.0
    candidates = [
        {"name": "getOrderDetail", "score": 0.5},
        {"name": "getShipment", "score": 0.5},
        {"name": "searchOrders", "score": 0.5},
    ]

    def scores(query: str, mode: str) -> dict[str, float]:
        out = apply_learning_suggestions(query, candidates, learning["suggestions"], mode=mode)
        return {c["name"]: c["score"] for c in out["candidates"]}

    # approved (promoted): boosts its target for a real query of the family, in promoted mode
    promoted = scores("최근 주문 상세 보여줘!", "promoted")
    assert promoted["getOrderDetail"] > 0.5 and promoted["searchOrders"] == 0.5
    # merely promotable (shipment): no effect in promoted mode, acts in shadow mode only
    query = "주문 ORD-20260725-0003 배송 조회"
    assert by_target(store, "orders-api")["getShipment"]["status"] == "promotable"
    assert scores(query, "promoted")["getShipment"] == 0.5
    assert scores(query, "shadow")["getShipment"] > 0.5
    # and nothing for a query of another family
    assert scores("고객 정보 조회", "shadow") == {c["name"]: 0.5 for c in candidates}


def test_any_chunking_gives_the_same_suggestions(store: Store) -> None:
    add_runs(store, "orders-api", ["order_detail", "shipment", "timeout", "coerced"] * 2, "a")
    add_runs(store, "claims-api", ["binding_repaired", "order_detail", "binding_missing"], "b")
    ProjectionEngine(store).catch_up()

    def derived(size: int) -> list[dict[str, Any]]:
        evidence: dict[str, Iterable[pl.DataFrame]] = {
            k: job_io.read_evidence(store, k, size=size) for k in job.EVIDENCE_KINDS
        }
        frame = job.derive(job_io.read_learning_records(store, size=size), evidence, Policy())
        return list(job.documents(frame, Policy()))

    whole = derived(100_000)
    assert whole and derived(1) == whole and derived(3) == whole


def test_a_capped_export_keeps_the_promoted_suggestions(store: Store) -> None:
    add_runs(store, "orders-api", ["order_detail", "order_detail", "shipment", "coerced"], "a")
    job.run(store, Policy())
    scrubber = get_scrubber(load_pseudonym_key(store.url))
    detail = by_target(store, "orders-api")["getOrderDetail"]
    sug.decide(store, scrubber, detail["id"], "promoted", "ops", "checked")
    block = sug.learning_block(store, "orders-api", {"max_suggestions": 2})["learning"]
    kept = [s["status"] for s in block["suggestions"]]
    assert len(kept) == 2 and kept[0] == "promoted" and "suggested" not in kept[:1]
