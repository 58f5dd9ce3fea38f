"""One run's stored events folded into what every projection needs: pure functions.

``fold(events)`` folds a run from its first event; ``advance(run, more)`` continues a fold with
the run's next events, so the projection engine folds each event once, whatever the batching
(it keeps the folds of open runs between batches and re-reads a run's stored prefix only when
it has no fold for it, e.g. in a new process). Every derived value depends only on the events
up to the one that produced it: a per-event row (a failure, a tool call, a binding repair, a
coercion, a data flow) is fixed when its event is folded, and the learning record is frozen at
the event that finished the run. So rows never depend on how the log was cut into batches
(rebuild == incremental). Only the scrubbed, stored payloads are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracelake.projections.dataflow import DATAFLOW_TYPES, DataFlowState
from tracelake.projections.taxonomy import Classification, classify
from tracelake.store.records import StoredEvent

RUNNING, PARTIAL, ATTENTION, SUCCESS, FAILED = (
    "Running",
    "Partial progress",
    "Needs attention",
    "Success",
    "Failed",
)
# seed 000, "Recommended UI grouping": the status of a run is the group of its latest event.
UI_GROUP = {
    "plan.started": RUNNING,
    "step.started": RUNNING,
    "step.retrying": RUNNING,
    "step.completed": PARTIAL,
    "step.skipped": PARTIAL,
    "args.coerced": PARTIAL,
    "binding.repaired": ATTENTION,
    "plan.repaired": ATTENTION,
    "plan.completed": SUCCESS,
    "step.failed": FAILED,
    "plan.aborted": FAILED,
    # agentlane
    "agent_start": RUNNING,
    "llm_start": RUNNING,
    "tool_start": RUNNING,
    "handoff_start": RUNNING,
    "llm_end": PARTIAL,
    "handoff_end": PARTIAL,
}
FAILURE_EVENTS = ("step.failed", "step.retrying", "step.skipped", "plan.aborted")
NOT_CALLED_KINDS = ("binding", "output_binding")  # the tool was never invoked


@dataclass(slots=True)
class Failure:
    event: StoredEvent
    classification: Classification
    plan_id: str | None
    step_id: str | None
    tool: str | None
    attempt: int | None = None
    field_name: str | None = None
    collection_id: str | None = None


@dataclass(slots=True)
class ToolCall:
    event: StoredEvent
    tool: str
    ok: bool
    step_id: str | None
    duration_ms: float | None
    collection_id: str | None = None


@dataclass(slots=True)
class Observed:
    """An event a projection turns into rows (a binding repair, a coercion), with what the run
    knew when it happened."""

    event: StoredEvent
    collection_id: str | None
    tool: str | None


@dataclass(slots=True)
class RunFold:
    """A run folded up to some position. Per-event items (``failures``, ``tool_calls``,
    ``bindings``, ``coercions``, ``flows``) hold what the last :func:`advance` added: the
    projection engine hands projections only the rows of new events."""

    run_id: str
    source: str
    started_at: datetime
    last_event: StoredEvent
    collection_id: str | None = None
    status: str = RUNNING
    finished: bool = False
    success: bool | None = None
    ended_at: datetime | None = None
    finish_position: int | None = None  # the event that finished the run
    record: dict[str, Any] | None = None  # the learning record, frozen at the finish
    finished_now: bool = False  # the last advance() finished the run
    plan_ids: list[str] = field(default_factory=list)
    goal: str | None = None
    tools: list[str] = field(default_factory=list)
    selected_target: str | None = None
    outcome: Classification | None = None  # why the run failed
    failed_step: str | None = None
    failed_tool: str | None = None
    total_duration_ms: float | None = None
    engine_version: str | None = None
    event_count: int = 0
    step_count: int = 0
    retry_count: int = 0
    skip_count: int = 0
    repair_count: int = 0
    coercion_count: int = 0
    binding_repair_count: int = 0
    step_tools: dict[tuple[str | None, str | None], str] = field(default_factory=dict)
    binding_keys: set[tuple[str, str, str, str]] = field(default_factory=set)
    # binding repairs come before their step's step.started, which names the tool: they wait
    # for it (or for the run's end) and are emitted once, with the tool
    waiting_bindings: dict[tuple[str | None, str | None], list[Observed]] = field(
        default_factory=dict
    )
    failures: list[Failure] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    bindings: list[Observed] = field(default_factory=list)
    coercions: list[Observed] = field(default_factory=list)
    flows: list[dict[str, Any]] = field(default_factory=list)
    dataflow: DataFlowState | None = None

    def tool_of(self, plan_id: str | None, step_id: str | None) -> str | None:
        return self.step_tools.get((plan_id, step_id))

    def emitted(self) -> None:
        """Forget the per-event items: their rows are written."""
        self.failures, self.tool_calls, self.bindings = [], [], []
        self.coercions, self.flows = [], []
        self.finished_now = False


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def fold(events: list[StoredEvent]) -> RunFold:
    """Fold one run's events (in position order, at least one) into a :class:`RunFold`."""
    first = events[0]
    run = RunFold(first.run_id, first.source, first.recorded_at, first)
    advance(run, events)
    return run


def advance(run: RunFold, events: list[StoredEvent]) -> RunFold:
    """Fold more of the run's events (in position order, after those already folded).

    Every derived value depends only on the events up to the one that produced it, never on
    how the log was cut into batches: rebuild == incremental."""
    for e in events:
        run.last_event = e
        run.event_count += 1
        if run.collection_id is None and e.collection_id:
            run.collection_id = e.collection_id
        if e.source == "agentlane":
            _agentlane(run, e)
        else:
            _graph_tool_call(run, e)
        if not run.finished and e.type in UI_GROUP:
            run.status = UI_GROUP[e.type]
        if run.finished:
            run.status = SUCCESS if run.success else FAILED
        if run.finished and run.finish_position is None:
            run.finish_position, run.finished_now = e.position, True
            run.dataflow = None  # flows are observed up to the run's end
            for waiting in run.waiting_bindings.values():  # their step never started
                for seen in waiting:
                    _emit_binding(run, seen)
            run.waiting_bindings.clear()
            from tracelake.projections.learning_records import record_of

            run.record = record_of(run)
    return run


def _graph_tool_call(run: RunFold, e: StoredEvent) -> None:
    p, t = e.payload, e.type
    meta = p.get("trace_metadata")
    plan_id, step_id = _s(p.get("plan_id")), _s(p.get("step_id"))
    run.engine_version = _s(p.get("graph_tool_call_version")) or run.engine_version
    if plan_id and not run.plan_ids:
        run.plan_ids.append(plan_id)
    if t == "plan.started":
        if run.goal is None and isinstance(p.get("goal"), str):
            run.goal = p["goal"]
    elif t == "step.started":
        run.step_count += 1
        tool = _s(p.get("tool"))
        if tool:
            run.tools.append(tool)
            run.step_tools[(plan_id, step_id)] = tool
        for seen in run.waiting_bindings.pop((plan_id, step_id), ()):
            seen.tool = tool
            _emit_binding(run, seen)
    elif t == "step.completed":
        tool = _s(p.get("tool")) or run.tool_of(plan_id, step_id)
        if tool:
            run.tool_calls.append(
                ToolCall(e, tool, True, step_id, _num(p.get("duration_ms")), run.collection_id)
            )
            if not run.finished and plan_id == (run.plan_ids[-1] if run.plan_ids else None):
                run.selected_target = tool  # the last completed step of the final plan
    elif t == "plan.repaired":
        run.repair_count += 1
        new = _s(p.get("new_plan_id"))
        if new and new not in run.plan_ids:
            run.plan_ids.append(new)
        failed = _s(p.get("failed_step"))
        tool = run.tool_of(plan_id, failed)
        if tool:
            run.tool_calls.append(ToolCall(e, tool, False, failed, None, run.collection_id))
    elif t == "args.coerced":
        run.coercion_count += 1
        run.coercions.append(Observed(e, run.collection_id, e.tool))
    elif t == "binding.repaired":
        run.binding_repair_count += 1
        tool = _s(p.get("tool")) or run.tool_of(plan_id, step_id)
        seen = Observed(e, run.collection_id, tool)
        if tool is None:
            run.waiting_bindings.setdefault((plan_id, step_id), []).append(seen)
        else:
            _emit_binding(run, seen)
    elif t in ("plan.completed", "plan.aborted") and not run.finished:
        run.finished, run.success, run.ended_at = True, t == "plan.completed", e.recorded_at
        run.total_duration_ms = _num(p.get("total_duration_ms"))
        if not run.success:
            run.failed_step = _s(p.get("failed_step"))
            run.failed_tool = run.tool_of(plan_id, run.failed_step) or _trace_tool(
                p.get("trace_steps"), run.failed_step
            )
            run.outcome = classify(p.get("error"), meta)
            run.selected_target = None
    if t == "step.retrying":
        run.retry_count += 1
    elif t == "step.skipped":
        run.skip_count += 1
    if t in FAILURE_EVENTS:
        error = p.get("error")
        cls = classify(error, meta)
        is_plan = t == "plan.aborted"
        f_step = run.failed_step if is_plan else step_id
        tool = run.failed_tool if is_plan else (_s(p.get("tool")) or run.tool_of(plan_id, step_id))
        attempt = p.get("attempt") if isinstance(p.get("attempt"), int) else None
        fname = (
            _s(error.get("field_name")) or _s(error.get("field"))
            if isinstance(error, dict)
            else None
        ) or cls.field_name
        run.failures.append(
            Failure(e, cls, plan_id, f_step, tool, attempt, fname, run.collection_id)
        )
        if not is_plan and tool and cls.error_kind not in NOT_CALLED_KINDS:
            dur = _num(p.get("duration_ms")) if t == "step.failed" else None
            run.tool_calls.append(ToolCall(e, tool, False, step_id, dur, run.collection_id))
    if not run.finished and t in DATAFLOW_TYPES and run.source == "graph_tool_call":
        if run.dataflow is None:
            run.dataflow = DataFlowState()
        run.flows.extend(run.dataflow.observe(run, e))


def _emit_binding(run: RunFold, seen: Observed) -> None:
    p = seen.event.payload
    run.bindings.append(seen)
    run.binding_keys.add(
        (
            seen.collection_id or "",
            seen.tool or "",
            _s(p.get("field_name")) or "",
            _s(p.get("recovered_path")) or "",
        )
    )


def _trace_tool(trace_steps: Any, step_id: str | None) -> str | None:
    if not isinstance(trace_steps, list) or step_id is None:
        return None
    for step in reversed(trace_steps):
        if isinstance(step, dict) and step.get("id") == step_id:
            return _s(step.get("tool"))
    return None


def _agentlane(run: RunFold, e: StoredEvent) -> None:
    outer = e.payload.get("payload")
    p: dict[str, Any] = outer if isinstance(outer, dict) else {}
    t = e.type
    root = p.get("is_root") is True
    if t == "agent_start" and root:
        task = _s(p.get("task_id"))
        if task and task not in run.plan_ids:
            run.plan_ids.append(task)
        run.collection_id = run.collection_id or _s(p.get("task_name"))
    elif t == "llm_start" and root and run.goal is None:
        run.goal = _first_user_message(p.get("messages"))
    elif t == "tool_start":
        run.step_count += 1
        name, call_id = _tool_call(p)
        if name:
            run.tools.append(name)
            run.step_tools[(None, call_id)] = name
    elif t == "tool_end":
        name, call_id = _tool_call(p)
        name = name or run.tool_of(None, call_id) or "?"
        run.step_tools.pop((None, call_id), None)  # what is left at agent_end never ended
        ok = p.get("ok") is not False
        run.tool_calls.append(ToolCall(e, name, ok, call_id, None, run.collection_id))
        if ok and root:
            run.selected_target = name
        if not ok:
            cls = classify(p.get("error"))
            run.failures.append(
                Failure(e, cls, None, call_id, name, None, cls.field_name, run.collection_id)
            )
            run.status = ATTENTION
    elif t == "agent_end" and root and not run.finished:
        run.finished, run.ended_at = True, e.recorded_at
        run.success = p.get("result") is not None
        if not run.success:
            open_calls = list(run.step_tools.items())
            stage = "execute" if open_calls else "agent"
            run.outcome = classify(p.get("error"), default_stage=stage)
            if open_calls:
                (_, run.failed_step), run.failed_tool = open_calls[-1]
            run.failures.append(
                Failure(
                    e,
                    run.outcome,
                    None,
                    run.failed_step,
                    run.failed_tool,
                    None,
                    None,
                    run.collection_id,
                )
            )
            run.selected_target = None
    if t == "tool_end" and p.get("ok") is not False and not run.finished:
        run.status = PARTIAL


def _tool_call(p: dict[str, Any]) -> tuple[str | None, str | None]:
    call = p.get("tool_call")
    if not isinstance(call, dict):
        return None, None
    fn = call.get("function")
    name = _s(fn.get("name")) if isinstance(fn, dict) else None
    return name, _s(call.get("id"))


def _first_user_message(messages: Any) -> str | None:
    if isinstance(messages, dict):
        messages = messages.get("_preview")
    if not isinstance(messages, list):
        return None
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
            return str(m["content"])
    return None
