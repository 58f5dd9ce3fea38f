"""The registry of suggestion kinds (``pipelines/suggestion_kinds.py``): one entry per kind says
how it is read, derived and exported; every lookup refuses an unknown kind by name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pipelines import io
from pipelines import suggestion_kinds as kinds
from tracelake.promotion import kinds as kind_names


def test_every_kind_is_counted_from_records_or_read_from_evidence() -> None:
    assert kinds.TYPES == (
        "target_preference",
        "plan_path",
        "data_flow_edge",
        "binding_repair",
        "enum_mapping_candidate",
    )
    assert kinds.RECORD_KINDS + kinds.EVIDENCE_KINDS == kinds.TYPES
    for name in kinds.EVIDENCE_KINDS:
        source = kinds.evidence_source(name)
        read = {str(c.key) for c in source.columns(source.table)}
        assert set(source.detail) == read  # what is read is what the suggestion keeps
        assert source.target in read


def test_unknown_kinds_are_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="target_preference"):
        kinds.kind("field_mapping")
    with pytest.raises(ValueError, match="data_flow_edge"):
        kinds.evidence_source("plan_path")
    with pytest.raises(ValueError, match="no evidence kind"):
        io.read_evidence(None, "plan_path")  # type: ignore[arg-type]  # refused before any I/O


def test_exports_are_graph_tool_calls_shapes() -> None:
    row: dict[str, Any] = {
        "target": "getOrder",
        "plan_tools": ["listOrders", "getOrder"],
        "source_tool": "listOrders",
        "target_tool": "getOrder",
        "from_path": "$.items[0].id",
        "to_field": "order_id",
        "tool": "getOrder",
        "field_name": "status",
        "recovered_path": "$.status",
        "failures": 2,
        "from_value": '"Shipped"',
        "to_value": '"SHIPPED"',
    }
    exported = {name: kinds.kind(name).export(row) for name in kinds.TYPES}
    assert exported["target_preference"] == (
        {},
        {"selected_target": "getOrder", "llm_target": None, "target_selector": {}},
    )
    assert exported["plan_path"][0] == {"plan_tools": ["listOrders", "getOrder"]}
    edge = exported["data_flow_edge"][0]["edge"]
    assert edge["data_flow"] == {"from_path": "$.items[0].id", "to_field": "order_id"}
    assert exported["binding_repair"][1]["failed_runs"] == 2
    assert exported["enum_mapping_candidate"][1]["from"] == "Shipped"
    assert exported["enum_mapping_candidate"][1]["to"] == "SHIPPED"


def test_the_registry_and_the_shared_kind_list_agree() -> None:
    """The review page reads names and evidence tables from tracelake.promotion.kinds; the
    batch job's registry has exactly those kinds, counted from exactly those tables."""
    assert kind_names.NAMES == kinds.TYPES
    for name, registered in kinds.KINDS.items():
        shared = kind_names.info(name)
        assert shared is not None
        source = registered.evidence
        assert shared.evidence is (source.table if source is not None else None), name
    with pytest.raises(ValueError, match="no evidence kind 'plan_path'"):
        kind_names.evidence_table("plan_path")


def test_a_kinds_tool_sequence_comes_from_the_document_or_its_evidence() -> None:
    assert kind_names.sequences({"type": "plan_path", "plan_tools": ["a", "b"]}) == [
        ("plan", ["a", "b"])
    ]
    older = {"type": "plan_path", "evidence": {"plan_tools": ["c"]}}
    assert kind_names.sequences(older) == [("plan", ["c"])]
    assert kind_names.sequences({"type": "plan_path", "evidence": "?"}) == [("plan", [])]
    assert kind_names.sequences({"type": "binding_repair", "plan_tools": ["a"]}) == []
    assert kind_names.sequences({"type": "retired_kind"}) == []


def test_the_web_page_names_no_suggestion_kind() -> None:
    """The page asks tracelake.promotion.kinds; a kind's name in web/ (code or template) would
    be a second list to keep in step."""
    web = Path(kind_names.__file__).parents[1] / "web"
    offenders = [
        f"{path.name}: {name}"
        for path in sorted([*web.rglob("*.py"), *web.rglob("*.html")])
        for name in kind_names.NAMES
        if re.search(rf"[\"']{name}[\"']", path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
