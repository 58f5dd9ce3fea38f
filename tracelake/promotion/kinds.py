"""The suggestion kinds by name, and what each is counted from: the one list that the batch job
and the review page both import (the layering keeps the page from importing ``pipelines``).

* ``pipelines/suggestion_kinds.py`` registers how each kind is read, derived and exported; its
  entries are these names, its evidence tables these tables (a test checks they agree);
* ``web/data.py`` shows a suggestion's evidence rows from the kind's ``evidence`` table, and
  the review page shows the kind's ``sequences`` (fields holding a tool sequence).

Adding a kind: one :class:`KindInfo` here, one ``SuggestionKind`` in the registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from tracelake.store.schema import binding_repair_evidence, coercion_evidence, data_flow_evidence

TARGET_PREFERENCE = "target_preference"
PLAN_PATH = "plan_path"
DATA_FLOW_EDGE = "data_flow_edge"
BINDING_REPAIR = "binding_repair"
ENUM_MAPPING_CANDIDATE = "enum_mapping_candidate"


@dataclass(frozen=True, slots=True)
class KindInfo:
    """One kind: its name, the evidence table it is counted from (None: from the learning
    records) and its document fields that hold a tool sequence (field -> label on the page)."""

    name: str
    evidence: sa.Table | None = None
    sequences: Mapping[str, str] = field(default_factory=dict)


KINDS: dict[str, KindInfo] = {
    k.name: k
    for k in (
        KindInfo(TARGET_PREFERENCE),
        KindInfo(PLAN_PATH, sequences={"plan_tools": "plan"}),
        KindInfo(DATA_FLOW_EDGE, data_flow_evidence),
        KindInfo(BINDING_REPAIR, binding_repair_evidence),
        KindInfo(ENUM_MAPPING_CANDIDATE, coercion_evidence),
    )
}
NAMES = tuple(KINDS)


def info(name: str) -> KindInfo | None:
    """The kind called *name*; None for a name no longer (or not yet) known."""
    return KINDS.get(name)


def evidence_table(name: str) -> sa.Table:
    """The evidence table of an evidence kind (ValueError for a kind counted from records)."""
    found = KINDS.get(name)
    if found is None or found.evidence is None:
        evidence_kinds = ", ".join(k.name for k in KINDS.values() if k.evidence is not None)
        raise ValueError(f"no evidence kind {name!r}; one of {evidence_kinds}")
    return found.evidence


def sequences(doc: Mapping[str, Any]) -> list[tuple[str, list[Any]]]:
    """``(label, tools)`` for each tool-sequence field of a suggestion document's kind, read
    from the document or, for older documents, its ``evidence``."""
    kind = info(str(doc.get("type")))
    if kind is None:
        return []
    evidence = doc.get("evidence")
    evidence = evidence if isinstance(evidence, Mapping) else {}
    return [
        (label, list(doc.get(name) or evidence.get(name) or []))
        for name, label in kind.sequences.items()
    ]
