"""Binding failures told apart: graph-tool-call's real PlanRunner produces each cause, the
events go through the normal ingest path (scrubbed), and ``v_failure_taxonomy`` gives each its
reason and ``detail``. Input-side failures read ``unsatisfied_field``."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest
import sqlalchemy as sa
from graph_tool_call.plan import Plan, PlanRunner, PlanStep

from tests.ingest.helpers import ingest_bytes
from tracelake.projections import ProjectionEngine
from tracelake.runners.failure_reasons import classify
from tracelake.store import Store

OUTPUTS: dict[str, Any] = {
    "listOrders": {"orders": []},  # an empty upstream list
    "getOrder": {"order": {"status": "paid"}},  # no orderNo in it
    "getShipment": {"shipment": {"carrier": "CJ"}},
}

# name -> (steps, input_context, output_binding, runner options, reason, detail, field_name)
CASES: dict[str, tuple[Any, ...]] = {
    "no_input": (
        [("s1", "getOrder", {"orderNo": "${input.orderNo}"})],
        None,
        None,
        {},
        "unsatisfied_field",
        "no_input_context",
        None,
    ),
    "input_key": (
        [("s1", "getOrder", {"orderNo": "${input.orderNo}"})],
        {"customerNo": "C-1"},
        None,
        {},
        "unsatisfied_field",
        "input_key_missing",
        "orderNo",
    ),
    "empty_list": (
        [("s1", "listOrders", {}), ("s2", "getOrder", {"orderNo": "${s1.orders[0].orderNo}"})],
        None,
        None,
        {},
        "binding_failed",
        "upstream_index_out_of_range",
        None,
    ),
    "upstream_field": (
        [("s1", "getOrder", {}), ("s2", "getShipment", {"orderNo": "${s1.order.orderNo}"})],
        None,
        None,
        {},
        "binding_failed",
        "upstream_field_missing",
        "orderNo",
    ),
    "unknown_step": (
        [("s1", "getShipment", {"orderNo": "${s9.order.orderNo}"})],
        None,
        None,
        {},
        "binding_failed",
        "upstream_step_missing",
        None,
    ),
    "output_field": (
        [("s1", "getOrder", {})],
        None,
        "${s1.order.orderNo}",
        {},
        "output_binding_failed",
        "output_field_missing",
        "orderNo",
    ),
}


def run_case(name: str) -> list[bytes]:
    steps, ctx, output, opts, *_ = CASES[name]
    plan = Plan(
        id=f"plan-{name}",
        goal="주문 상세",
        steps=[PlanStep(id=i, tool=t, args=a) for i, t, a in steps],
        output_binding=output,
    )
    runner = PlanRunner(lambda tool, _args: OUTPUTS[tool], _sleep=lambda _s: None, **opts)
    lines = []
    for seq, e in enumerate(runner.run_stream(plan, input_context=ctx), 1):
        env = {"type": "runner.event", "run_id": f"run-{name}", "seq": seq, "event": asdict(e)}
        lines.append(json.dumps(env, ensure_ascii=False, default=str).encode() + b"\n")
    return lines


def test_each_binding_cause_gets_its_reason_and_detail(store: Store) -> None:
    ingest_bytes(store, b"".join(line for name in CASES for line in run_case(name)))
    ProjectionEngine(store).catch_up()
    with store.reading() as conn:
        found = conn.execute(
            sa.text(
                "SELECT run_id, event_type, reason, detail, field_name FROM v_failure_taxonomy"
                " ORDER BY position"
            )
        ).all()
        records: dict[str, str | None] = dict(
            conn.execute(sa.text("SELECT run_id, failure_reason FROM v_learning_records"))
            .tuples()
            .all()
        )
    by_run: dict[str, list[Any]] = {}
    for r in found:
        by_run.setdefault(r.run_id, []).append(r)
    for name, (*_, reason, detail, field_name) in CASES.items():
        rows = by_run[f"run-{name}"]
        assert {(r.reason, r.detail) for r in rows} == {(reason, detail)}, (name, rows)
        first = rows[0]
        assert first.field_name == field_name, name
        assert records[f"run-{name}"] == reason


@pytest.mark.parametrize(
    ("kind", "message", "reason", "detail"),
    [
        (
            "output_binding",
            "terminal step 's3' produced no output (skipped or failed) — no answer to return",
            "output_binding_failed",
            "terminal_step_no_output",
        ),
        ("binding", "wildcard on empty list in binding 's1.items.*'", "binding_failed",
         "upstream_empty"),
        ("binding", "non-numeric array index '[x]' in binding 's1.a[x]'", "binding_failed",
         "invalid_binding_expression"),
        ("binding", "key 'timeout' not found in binding 's1.timeout' (available: [])",
         "binding_failed", "upstream_field_missing"),
        ("binding", "could not fill required input orderNo", "unsatisfied_field",
         "input_unsatisfied"),
        ("binding", "something new", "binding_failed", "binding_unresolved"),
    ],
)  # fmt: skip
def test_detail_from_message_patterns(kind: str, message: str, reason: str, detail: str) -> None:
    got = classify({"kind": kind, "message": message})
    assert (got.reason, got.detail) == (reason, detail)


def test_detail_of_other_reasons() -> None:
    assert classify({"kind": "tool", "http_status": 503}).detail == "http_503"
    assert classify({"kind": "tool", "exception_type": "ReadTimeout"}).detail == "timeout"
    assert classify({}).detail == "unknown"
