"""One home for promotion: learning records are facts (never updated), status comes from the
suggestion decisions only, and ``v_binding_repair_evidence`` has one row per evidence event
even when the same repair is seen in several query families."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import sqlalchemy as sa

from pipelines import promote as job
from pipelines.promotion_policy import Policy
from tests.ingest.helpers import ingest_bytes
from tracelake.demo import run_scenario, scenarios
from tracelake.projections import ProjectionEngine
from tracelake.promotion import review as sug
from tracelake.scrub import get_scrubber
from tracelake.store import Store

SCENARIOS = {s.name: s for s in scenarios()}


def add(store: Store, name: str, goal: str, run_id: str, collection: str = "orders-api") -> None:
    scenario = replace(SCENARIOS[name], goal=goal)
    lines = []
    for seq, e in enumerate(run_scenario(scenario, {"collection_id": collection}), 1):
        env = {"type": "runner.event", "run_id": run_id, "seq": seq, "event": asdict(e)}
        lines.append(json.dumps(env, ensure_ascii=False).encode() + b"\n")
    ingest_bytes(store, b"".join(lines))


def forbid_updates(store: Store, table: str) -> None:
    """A trigger that refuses any UPDATE of *table* (test-only)."""
    with store.writing() as conn:
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql(
                f"CREATE TRIGGER no_update_{table} BEFORE UPDATE ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} must not be updated'); END"
            )
        else:
            conn.exec_driver_sql(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'must not be updated: %%', TG_TABLE_NAME; END $$"
            )
            conn.exec_driver_sql(
                f"CREATE TRIGGER no_update BEFORE UPDATE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            )


def q(store: Store, sql: str) -> list[sa.Row[tuple[object, ...]]]:
    with store.reading() as conn:
        return list(conn.execute(sa.text(sql)).all())


def test_records_are_never_updated_and_status_comes_from_decisions(store: Store) -> None:
    forbid_updates(store, "learning_records")
    engine = ProjectionEngine(store, batch_size=7)  # many small batches
    for i in range(4):
        add(store, "order_detail", "최근 주문 상세 보여줘", f"ok-{i}")
        engine.catch_up()
        job.run(store, Policy())
    add(store, "rate_limited_429", "최근 주문 상세 보여줘", "fail-0")
    engine.catch_up()
    job.run(store, Policy())
    first = q(store, "SELECT * FROM learning_records ORDER BY run_id")
    assert len(first) == 5
    stats = store.stats()  # `tracelake stats`: the decisions' runs are not runs
    assert stats["runs"] == 5 and stats["events_by_source"]["tracelake"] > 0

    target = next(
        d for d in sug.list_suggestions(store, "orders-api") if d["type"] == "target_preference"
    )
    sug.decide(store, get_scrubber(b"k" * 32), target["id"], "promoted", "ops", "ok")
    ProjectionEngine(store).catch_up()
    assert q(store, "SELECT * FROM learning_records ORDER BY run_id") == first  # facts
    view = {
        r.run_id: (r.promotion_status, r.suggestion_id)
        for r in q(store, "SELECT run_id, promotion_status, suggestion_id FROM v_learning_records")
    }
    assert view["fail-0"] == ("not_eligible", None)
    assert {view[f"ok-{i}"] for i in range(4)} == {("promoted", target["id"])}
    (status,) = q(store, f"SELECT status FROM suggestions WHERE id = '{target['id']}'")[0]
    assert status == "promoted"


def test_binding_repair_evidence_has_one_row_per_event_across_families(store: Store) -> None:
    goals = ["배송 추적해줘", "배송 상태 알려줘", "택배 어디쯤 왔어"]  # three query families
    for i, goal in enumerate(goals * 2):
        add(store, "binding_repaired", goal, f"repair-{i}")
    job.run(store, Policy())
    (n,) = q(store, "SELECT COUNT(*) FROM events WHERE type = 'binding.repaired'")[0]
    rows = q(
        store,
        "SELECT position, query_family, suggestion_id, promotion_status"
        " FROM v_binding_repair_evidence",
    )
    assert len(rows) == n == 6
    assert len({r.position for r in rows}) == n  # one row per evidence event
    repairs = {
        d["id"]: d
        for d in sug.list_suggestions(store, "orders-api")
        if d["type"] == "binding_repair"
    }
    assert len(repairs) == 3  # one per family
    for r in rows:
        assert repairs[r.suggestion_id]["query_family"] == r.query_family
        assert r.promotion_status == repairs[r.suggestion_id]["status"] == "promotable"
