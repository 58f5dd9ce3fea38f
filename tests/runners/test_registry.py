"""The registry is the one list of runner families: the scrubber, the columns and the fold all
come from it, and each adapter's fold covers its contract's event types."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import tracelake
from tests.conftest import AGENTLANE, require_agentlane_samples
from tracelake.demo import run_scenario, scenarios
from tracelake.runners import classify, classify_object
from tracelake.runners.adapter import RunnerAdapter
from tracelake.runners.field_rules import RULE_NAMES, rule_names
from tracelake.runners.registry import ADAPTERS, SOURCE_UNKNOWN, STATUS_GROUPS, adapter_for
from tracelake.scrub.sources import NAMED, SOURCES

PACKAGE = Path(tracelake.__file__).parent


@pytest.fixture(params=ADAPTERS, ids=lambda a: a.source)
def adapter(request: pytest.FixtureRequest) -> RunnerAdapter:
    a: RunnerAdapter = request.param
    return a


def test_sources_are_unique_and_the_scrubber_knows_exactly_them() -> None:
    sources = [a.source for a in ADAPTERS]
    assert len(sources) == len(set(sources))
    assert set(SOURCES) == {*sources, SOURCE_UNKNOWN}
    assert all(adapter_for(s) is a for s, a in zip(sources, ADAPTERS, strict=True))


def test_fold_covers_the_contract(adapter: RunnerAdapter) -> None:
    """Every contract type has a handler or is declared passive; nothing outside the contract
    has one; status groups name contract types only."""
    types, handled = set(adapter.models), set(adapter.handlers)
    assert handled.isdisjoint(adapter.passive)
    assert handled | adapter.passive == types
    assert set(adapter.status_groups) <= types


def test_status_groups_come_from_the_adapters() -> None:
    assert {t: g for a in ADAPTERS for t, g in a.status_groups.items()} == STATUS_GROUPS


def test_field_policy_uses_only_rules_the_scrubber_implements(adapter: RunnerAdapter) -> None:
    assert set(NAMED) == RULE_NAMES
    policy = adapter.field_policy
    tables = [policy.fields, *policy.by_type.values()]
    assert all(rule_names(t) <= RULE_NAMES for t in tables)
    assert set(policy.by_type) <= set(adapter.models)


def _seed_events() -> list[dict[str, Any]]:
    """graph-tool-call's real PlanRunner (the demo) and agentlane's sample events."""
    gtc = [classify_object(e, 64) for s in scenarios() for e in run_scenario(s)]
    out = [{"source": i.source, "type": i.type, "event": i.event} for i in gtc]
    path = require_agentlane_samples() / "events.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            i = classify(json.loads(line))
            out.append({"source": i.source, "type": i.type, "event": i.event})
    return out


def test_seed_events_all_have_an_adapter_that_handles_their_type() -> None:
    events = _seed_events()
    assert AGENTLANE.exists()
    seen = {e["source"] for e in events}
    assert seen == {a.source for a in ADAPTERS}  # every family is exercised, none unknown
    for e in events:
        a = adapter_for(e["source"])
        assert a is not None
        assert e["type"] in a.handlers or e["type"] in a.passive, (a.source, e["type"])


def _string_constants(tree: ast.AST) -> set[str]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    }


def test_no_module_outside_runners_names_a_runner() -> None:
    """Adding a runner is adding a module under tracelake/runners: nothing else says a
    runner family's source name in code (docstrings may)."""
    names = {a.source for a in ADAPTERS}
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "runners" not in path.relative_to(PACKAGE).parts
        and names & _string_constants(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == []


def test_adapters_are_frozen_values() -> None:
    assert all(dataclasses.is_dataclass(a) for a in ADAPTERS)
