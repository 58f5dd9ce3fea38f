"""Every input form the seeds name is recognised; the contract is additive."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENTLANE, require_agentlane_samples
from tracelake.demo import run_scenario, scenarios
from tracelake.errors import ContractError
from tracelake.runners import (
    SOURCE_AGENTLANE,
    SOURCE_GRAPH_TOOL_CALL,
    SOURCE_UNKNOWN,
    classify,
    classify_object,
)
from tracelake.runners.graph_tool_call_events import EVENT_MODELS

DEPTH = 64


def real_events() -> list[Any]:
    return [e for s in scenarios() for e in run_scenario(s)]


def test_demo_corpus_covers_all_eleven_runner_event_types() -> None:
    assert {e.type for e in real_events()} == set(EVENT_MODELS)


@pytest.mark.parametrize("form", ["object", "asdict", "envelope", "json"])
def test_graph_tool_call_forms(form: str) -> None:
    for event in real_events():
        as_dict = dataclasses.asdict(event)
        if form == "object":
            inbound = classify_object(event, DEPTH)
        elif form == "asdict":
            inbound = classify_object(as_dict, DEPTH)
        elif form == "envelope":
            env = {"type": "runner.event", "run_id": "ql-run-20260725-001", "event": as_dict}
            inbound = classify_object(env, DEPTH)
            assert inbound.run_id == "ql-run-20260725-001"
        else:
            inbound = classify(json.loads(json.dumps(as_dict, ensure_ascii=False)))
        assert inbound.source == SOURCE_GRAPH_TOOL_CALL
        assert inbound.type == event.type
        assert inbound.event["plan_id"] == event.plan_id
        assert inbound.starts_run == (event.type == "plan.started")


def test_copy_is_private_and_the_callers_event_is_untouched() -> None:
    event = next(e for e in real_events() if e.type == "step.started")
    before = dataclasses.asdict(event)
    inbound = classify_object(event, DEPTH)
    inbound.event["args_resolved"]["orderNo"] = "changed"
    inbound.event["trace_metadata"]["collection_id"] = "changed"
    assert dataclasses.asdict(event) == before


def _agentlane_lines() -> list[dict[str, Any]]:
    path = require_agentlane_samples() / "events.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_agentlane_sample_kind_is_recognised() -> None:
    lines = _agentlane_lines()
    kinds = set()
    for line in lines:
        inbound = classify(line)
        assert inbound.source == SOURCE_AGENTLANE
        kinds.add(inbound.type)
    manifest = json.loads((AGENTLANE / "manifest.json").read_text())
    assert kinds == set(manifest["counts_by_kind"])
    roots = [i for i in map(classify, lines) if i.starts_run]
    assert len(roots) == manifest["runs"]  # child agents (is_root false) do not start runs


def test_agentlane_event_objects_with_to_dict_are_accepted() -> None:
    line = _agentlane_lines()[0]

    class FakeRunEvent:  # stands in for agentlane's RunEvent (agentlane needs Python 3.12)
        def to_dict(self) -> dict[str, Any]:
            return line

    assert classify_object(FakeRunEvent(), DEPTH).type == line["type"]


def test_unknown_types_and_fields_are_kept() -> None:
    inbound = classify({"type": "plan.paused", "stage": "runner", "why": "operator"})
    assert (inbound.source, inbound.event["why"]) == (SOURCE_GRAPH_TOOL_CALL, "operator")
    extra = classify({"type": "step.completed", "step_id": "s1", "new_field": [1, 2]})
    assert extra.event["new_field"] == [1, 2]
    other = classify({"type": "custom.metric", "value": 3})
    assert other.source == SOURCE_UNKNOWN


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"stage": "runner"}, "missing_type"),
        ({"type": 7}, "missing_type"),
        ({"type": "plan.started", "stage": "runner", "step_count": "many"}, "contract_violation"),
        ({"type": "tool_end", "payload": {"ok": "perhaps"}}, "contract_violation"),
        (
            {"type": "runner.event", "run_id": 5, "event": {"type": "step.started"}},
            "contract_violation",
        ),
        (
            {"type": "runner.event", "seq": 0, "event": {"type": "step.started"}},
            "contract_violation",
        ),
    ],
)
def test_wrong_shapes_raise_contract_errors(event: dict[str, Any], reason: str) -> None:
    with pytest.raises(ContractError) as info:
        classify(event)
    assert info.value.reason == reason


def test_objects_are_made_json_safe_and_depth_limited() -> None:
    import datetime as dt
    import math

    inbound = classify_object(
        {
            "type": "x",
            "when": dt.datetime(2026, 7, 25),
            "nan": math.nan,
            "raw": b"secret",
            "p": Path("a"),
        },
        DEPTH,
    )
    assert inbound.event == {
        "type": "x",
        "when": "2026-07-25T00:00:00",
        "nan": None,
        "raw": "<6 bytes>",
        "p": "a",
    }
    deep: dict[str, Any] = {"type": "x"}
    node = deep
    for _ in range(DEPTH + 1):
        node["n"] = {}
        node = node["n"]
    with pytest.raises(ContractError, match="too_deep"):
        classify_object(deep, DEPTH)
    cyclic: dict[str, Any] = {"type": "x"}
    cyclic["self"] = cyclic
    with pytest.raises(ContractError, match="too_deep"):
        classify_object(cyclic, DEPTH)
