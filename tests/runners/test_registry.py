"""The registry is the one list of runner families: the scrubber, the columns and the fold all
come from it, and each adapter's fold covers its contract's event types."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

import tracelake
from tests.architecture.import_graph import docstring_ids
from tests.conftest import AGENTLANE, require_agentlane_samples
from tracelake.demo import run_scenario, scenarios
from tracelake.runners import classify, classify_object
from tracelake.runners.adapter import RunnerAdapter
from tracelake.runners.field_rules import RULE_NAMES, rule_names
from tracelake.runners.registry import (
    ADAPTERS,
    SOURCE_UNKNOWN,
    STATUS_GROUPS,
    TIMELINE_HIDDEN,
    TIMELINE_TROUBLE,
    adapter_for,
    timeline_note,
)
from tracelake.scrub.sources import NAMED, SOURCES

PACKAGE = Path(tracelake.__file__).parent
PIPELINES = PACKAGE.parent / "pipelines"


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
    docstrings = docstring_ids(tree)
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    }


def _outside_runners() -> list[Path]:
    """tracelake's modules and templates outside tracelake/runners, and pipelines'."""
    files = [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.html"), *PIPELINES.rglob("*.py")]
    return sorted(
        p
        for p in files
        if not (p.is_relative_to(PACKAGE) and "runners" in p.relative_to(PACKAGE).parts)
    )


def _quoted(path: Path) -> set[str]:
    """The string constants of a module (not its docstrings), or the quoted strings of a
    template."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return _string_constants(ast.parse(text))
    return {m.group(2) for m in re.finditer(r"(['\"])([^'\"]*)\1", text)}


def test_no_module_outside_runners_names_a_runner_or_its_event_types() -> None:
    """Adding a runner is adding a module under tracelake/runners: nothing else says a
    runner family's source name or one of its event types in code or a template (docstrings
    may); what the rest needs to know about a type is an adapter hook."""
    names = {a.source for a in ADAPTERS} | {t for a in ADAPTERS for t in a.models}
    offenders = {
        f"{path.relative_to(PACKAGE.parent)}: {sorted(found)}"
        for path in _outside_runners()
        if (found := names & _quoted(path))
    }
    assert offenders == set()


def test_the_name_reader_sees_names() -> None:
    """Guard: the readers find a quoted name in code and in a template, not in a docstring."""
    assert _string_constants(ast.parse('"""step.failed"""\nx = "step.failed"')) == {"step.failed"}
    assert _string_constants(ast.parse('"""step.failed"""')) == set()
    assert len(_outside_runners()) > 50 and any(p.suffix == ".html" for p in _outside_runners())


def test_timeline_hooks_name_contract_types(adapter: RunnerAdapter) -> None:
    types = set(adapter.models)
    assert adapter.hidden <= types and adapter.trouble <= types and set(adapter.notes) <= types
    assert frozenset().union(*(a.hidden for a in ADAPTERS)) == TIMELINE_HIDDEN
    assert frozenset().union(*(a.trouble for a in ADAPTERS)) == TIMELINE_TROUBLE


def test_timeline_notes_come_from_the_adapters() -> None:
    assert timeline_note("binding.repaired", {"recovered_path": "$.a"}) == ["recovered_path=$.a"]
    assert timeline_note("binding.repaired", {}) == []
    assert timeline_note("agent_end", {"is_root": True, "result": None}) == ["no result"]
    assert timeline_note("agent_end", {"is_root": True, "result": "ok"}) == []
    assert timeline_note("no.such.type", {"recovered_path": "$.a"}) == []


def test_adapters_are_frozen_values() -> None:
    assert all(dataclasses.is_dataclass(a) for a in ADAPTERS)
