"""``tracelake explain RUN_ID``: a run's timeline, where it failed, the likely cause, what to check.

Folds the run straight from the log (it works before ``tracelake project`` has run) and
applies the runner's troubleshooting table (seed 000's for graph-tool-call), then the failure
taxonomy's operator action. Which events the timeline leaves out and what detail it adds for
a type are the runner adapters' (``RunnerAdapter.hidden`` / ``notes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracelake.projections.fold import fold
from tracelake.runners.registry import TIMELINE_HIDDEN, adapter_for, timeline_note
from tracelake.runners.run_model import Hint, RunFold
from tracelake.store import Store
from tracelake.store.records import StoredEvent


@dataclass(frozen=True, slots=True)
class Step:
    seq: int
    position: int
    type: str
    step_id: str | None
    tool: str | None
    note: str


@dataclass
class Explanation:
    run: RunFold
    timeline: list[Step]
    failed_at: str | None
    hints: list[Hint] = field(default_factory=list)


def explain(store: Store, run_id: str) -> Explanation | None:
    events = store.run_events(run_id)
    if not events:
        return None
    events.sort(key=lambda e: e.position)
    run = fold(events)
    timeline = [_step(e) for e in events if e.type not in TIMELINE_HIDDEN]
    failed_at = None
    if run.finished and not run.success:
        failed_at = f"step {run.failed_step or '?'} (tool {run.failed_tool or '?'})"
        if run.outcome is not None:
            failed_at += f" at stage {run.outcome.stage}"
    return Explanation(run, timeline, failed_at, hints(run, events))


def hints(run: RunFold, events: list[StoredEvent]) -> list[Hint]:
    """The runner's troubleshooting hints, then each failure reason's operator action."""
    adapter = adapter_for(run.source)
    out = adapter.troubleshoot(run, frozenset(e.type for e in events)) if adapter else []
    seen: set[str] = set()
    for f in run.failures:
        c = f.classification
        if c.reason not in seen:
            seen.add(c.reason)
            out.append(Hint(f"failure reason {c.reason}", f"stage {c.stage}", c.operator_action))
    return out


def _step(e: StoredEvent) -> Step:
    p: dict[str, Any] = e.payload
    adapter = adapter_for(e.source)
    body = adapter.body(p) if adapter is not None else p
    tool = e.tool
    if tool is None and isinstance(body.get("tool_call"), dict):
        fn = body["tool_call"].get("function")
        tool = fn.get("name") if isinstance(fn, dict) else None
    return Step(e.seq, e.position, e.type, e.step_id, tool, _note(e.type, body))


def _note(etype: str, p: dict[str, Any]) -> str:
    err = p.get("error")
    parts: list[str] = []
    if isinstance(err, dict):
        for key in ("kind", "http_status", "exception_type", "reason_code"):
            if err.get(key) is not None:
                parts.append(f"{key}={err[key]}")
    for key in ("attempt", "duration_ms", "failed_step", "new_plan_id", "field_name", "ok"):
        if p.get(key) is not None:
            parts.append(f"{key}={p[key]}")
    parts.extend(timeline_note(etype, p))  # the runner's own detail (its adapter's notes)
    return " ".join(parts)
