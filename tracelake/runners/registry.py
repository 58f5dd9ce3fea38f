"""The one list of runner families. Everything runner-specific is reached from here.

Adding a runner: write ``tracelake/runners/<family>.py`` that builds a ``RunnerAdapter`` and add
it to ``ADAPTERS``. The order matters only for recognising a bare event: the first adapter
whose ``looks_like`` accepts it wins.
"""

from __future__ import annotations

from typing import Any

from tracelake.runners import agentlane, graph_tool_call
from tracelake.runners import field_rules as r
from tracelake.runners.adapter import Columns, Note, RunnerAdapter
from tracelake.runners.run_model import Event, RunFold

ADAPTERS: tuple[RunnerAdapter, ...] = (graph_tool_call.ADAPTER, agentlane.ADAPTER)

SOURCE_UNKNOWN = "unknown"  # an event no adapter recognises: stored, its type kept, rest walked
UNKNOWN_POLICY = r.FieldPolicy({"type": r.KEEP})

BY_SOURCE: dict[str, RunnerAdapter] = {a.source: a for a in ADAPTERS}
# Events of other sources (unrecognised ones, tracelake's own decision events) have always been
# folded with graph-tool-call's flat reading (a ``plan_id`` field is a plan id); kept so.
_FOLD_FALLBACK = graph_tool_call.ADAPTER

# seed 000's UI grouping: the status a run's latest event type means, over every runner
STATUS_GROUPS: dict[str, str] = {t: g for a in ADAPTERS for t, g in a.status_groups.items()}

# A run's timeline, over every runner: types left out, types that mark trouble, extra detail.
TIMELINE_HIDDEN: frozenset[str] = frozenset().union(*(a.hidden for a in ADAPTERS))
TIMELINE_TROUBLE: frozenset[str] = frozenset().union(*(a.trouble for a in ADAPTERS))
_NOTES: dict[str, Note] = {t: n for a in ADAPTERS for t, n in a.notes.items()}


def adapter_for(source: str) -> RunnerAdapter | None:
    """The adapter of a stored ``source`` value; ``None`` for unknown and tracelake's own."""
    return BY_SOURCE.get(source)


def recognise(event: dict[str, Any]) -> RunnerAdapter | None:
    """The adapter whose runner produced this bare event, if any."""
    for adapter in ADAPTERS:
        if adapter.looks_like(event):
            return adapter
    return None


def fold_event(run: RunFold, event: Event) -> None:
    """Fold one stored event into *run* with its runner's handlers."""
    BY_SOURCE.get(event.source, _FOLD_FALLBACK).fold(run, event)


def timeline_note(etype: str, body: dict[str, Any]) -> list[str]:
    """The runner's extra detail for an event of type *etype* in a timeline (often none)."""
    note = _NOTES.get(etype)
    return note(body) if note is not None else []


def columns_of(source: str, payload: dict[str, Any]) -> Columns:
    """``(plan_id, step_id, tool)`` of a scrubbed payload, as its runner reads them."""
    adapter = BY_SOURCE.get(source)
    return adapter.columns(payload) if adapter is not None else (None, None, None)
