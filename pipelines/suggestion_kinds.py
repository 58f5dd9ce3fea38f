"""The registry of suggestion kinds: each kind says, in one place, how it is read, derived and
exported. Adding a kind means adding one :class:`SuggestionKind` to :data:`KINDS` (and its
name and evidence table to ``tracelake.promotion.kinds``, which the review page shares).

* **read** (evidence kinds only): the evidence table, the columns the job reads from it and
  the rows it keeps (:func:`pipelines.io.read_evidence` joins them to the run's learning record);
* **derived**: record kinds are counted from the learning records by a transform of
  :mod:`pipelines.derive` (``target_counts``/``plan_counts``, reduced on ``keys``); evidence
  kinds by ``derive.evidence_counts`` with the kind's ``key`` expression, ``detail`` columns and
  ``target`` column; ``fill`` completes ``key``/``target`` when the suggestion is finished;
* **exported**: :meth:`SuggestionKind.export` turns one derived row into the kind's fields of
  the suggestion document and its ``evidence`` (graph-tool-call's shapes).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import sqlalchemy as sa

from tracelake.promotion.kinds import (
    BINDING_REPAIR,
    DATA_FLOW_EDGE,
    ENUM_MAPPING_CANDIDATE,
    PLAN_PATH,
    TARGET_PREFERENCE,
    evidence_table,
)

from . import derive

Row = Mapping[str, Any]
Exported = tuple[dict[str, Any], dict[str, Any]]  # (document fields, evidence)


@dataclass(frozen=True, slots=True)
class RecordSource:
    """A kind counted from the learning records: the transform and the reduction keys."""

    counts: Callable[[pl.LazyFrame], pl.LazyFrame]
    keys: tuple[str, ...]
    same: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EvidenceSource:
    """A kind counted from an evidence table (joined to the run's learning record)."""

    table: sa.Table
    columns: Callable[[sa.Table], list[sa.ColumnElement[Any]]]
    keep: Callable[[sa.Table], sa.ColumnElement[bool]]
    key: pl.Expr
    detail: tuple[str, ...]
    target: str  # the column that is the suggestion's target


@dataclass(frozen=True, slots=True)
class SuggestionKind:
    name: str
    source: RecordSource | EvidenceSource
    export: Callable[[Row], Exported]
    fill: dict[str, pl.Expr] = field(default_factory=dict)

    @property
    def evidence(self) -> EvidenceSource | None:
        return self.source if isinstance(self.source, EvidenceSource) else None

    @property
    def records(self) -> RecordSource | None:
        return self.source if isinstance(self.source, RecordSource) else None


def _text(column: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
    return sa.cast(column, sa.Text)


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


# --- export: one derived row -> (the kind's document fields, its evidence) -------------------


def _export_target(r: Row) -> Exported:
    return {}, {"selected_target": r["target"], "llm_target": None, "target_selector": {}}


def _export_plan(r: Row) -> Exported:
    return {"plan_tools": list(r["plan_tools"])}, {"plan_tools": list(r["plan_tools"])}


def _export_edge(r: Row) -> Exported:
    edge = {
        "source": r["source_tool"],
        "target": r["target_tool"],
        "data_flow": {"from_path": r["from_path"], "to_field": r["to_field"]},
    }
    return {"edge": edge}, {"edge": edge}


def _export_repair(r: Row) -> Exported:
    evidence = {k: r[k] for k in ("tool", "field_name", "recovered_path")}
    evidence["failed_runs"] = int(r["failures"])
    return {}, evidence


def _export_enum(r: Row) -> Exported:
    return {}, {
        "tool": r["tool"],
        "field_name": r["field_name"],
        "rule": "enum",
        "from": _json(r["from_value"]),
        "to": _json(r["to_value"]),
    }


# --- the registry -------------------------------------------------------------------------

# the names and evidence tables are tracelake.promotion.kinds' (the review page reads them too)
_df, _ev, _co = (
    evidence_table(k) for k in (DATA_FLOW_EDGE, BINDING_REPAIR, ENUM_MAPPING_CANDIDATE)
)

KINDS: dict[str, SuggestionKind] = {
    k.name: k
    for k in (
        SuggestionKind(
            TARGET_PREFERENCE,
            RecordSource(derive.target_counts, ("target",)),
            _export_target,
            fill={"key": pl.col("target")},
        ),
        SuggestionKind(
            PLAN_PATH,
            RecordSource(derive.plan_counts, ("key",), same=("plan_tools",)),
            _export_plan,
            fill={"target": pl.col("plan_tools").list.last()},
        ),
        SuggestionKind(
            DATA_FLOW_EDGE,
            EvidenceSource(
                table=_df,
                columns=lambda t: [t.c.source_tool, t.c.target_tool, t.c.to_field, t.c.from_path],
                keep=lambda t: sa.true(),
                key=pl.format("{}->{}:{}", "source_tool", "target_tool", "to_field"),
                detail=("source_tool", "target_tool", "to_field", "from_path"),
                target="target_tool",
            ),
            _export_edge,
        ),
        SuggestionKind(
            BINDING_REPAIR,
            EvidenceSource(
                table=_ev,
                columns=lambda t: [t.c.tool, t.c.field_name, t.c.recovered_path],
                keep=lambda t: sa.and_(
                    t.c.tool.is_not(None),
                    t.c.field_name.is_not(None),
                    t.c.recovered_path.is_not(None),
                ),
                key=pl.format("{}.{}<-{}", "tool", "field_name", "recovered_path"),
                detail=("tool", "field_name", "recovered_path"),
                target="tool",
            ),
            _export_repair,
        ),
        SuggestionKind(
            ENUM_MAPPING_CANDIDATE,
            EvidenceSource(
                table=_co,
                columns=lambda t: [
                    t.c.tool,
                    t.c.field_name,
                    _text(t.c.from_value).label("from_value"),
                    _text(t.c.to_value).label("to_value"),
                ],
                keep=lambda t: sa.and_(
                    t.c.rule == "enum", t.c.tool.is_not(None), t.c.field_name.is_not(None)
                ),
                key=pl.format("{}.{}:{}->{}", "tool", "field_name", "from_value", "to_value"),
                detail=("tool", "field_name", "from_value", "to_value"),
                target="tool",
            ),
            _export_enum,
        ),
    )
}
TYPES = tuple(KINDS)
RECORD_KINDS = tuple(k for k, v in KINDS.items() if v.records is not None)
EVIDENCE_KINDS = tuple(k for k, v in KINDS.items() if v.evidence is not None)


def kind(name: str) -> SuggestionKind:
    """The registered kind called ``name`` (ValueError naming the known ones otherwise)."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"no suggestion kind {name!r}; one of {', '.join(TYPES)}") from None


def evidence_source(name: str) -> EvidenceSource:
    source = kind(name).evidence
    if source is None:
        raise ValueError(f"no evidence kind {name!r}; one of {', '.join(EVIDENCE_KINDS)}")
    return source
