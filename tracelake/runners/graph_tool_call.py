"""The graph-tool-call runner adapter: ``PlanRunner.run_stream()`` events (seeds 000 and 002).

Contract: ``graph_tool_call_events`` (the real library's eleven dataclasses as models).

Field policy: events arrive as ``dataclasses.asdict(event)``: flat, the same field means the
same thing in every event type, so one table covers all eleven types. Fold: one small handler
per event type (``HANDLERS``); the data-flow observation is in ``graph_tool_call_flow``.
"""

from __future__ import annotations

from typing import Any

from tracelake.runners import field_rules as r
from tracelake.runners.adapter import Columns, RunnerAdapter
from tracelake.runners.failure_reasons import classify
from tracelake.runners.graph_tool_call_events import EVENT_MODELS
from tracelake.runners.graph_tool_call_flow import DataFlowState
from tracelake.runners.graph_tool_call_hints import troubleshoot
from tracelake.runners.run_model import (
    ATTENTION,
    FAILED,
    PARTIAL,
    RUNNING,
    SUCCESS,
    Event,
    Failure,
    Handler,
    Observed,
    RunFold,
    ToolCall,
    number,
    text,
)

SOURCE = "graph_tool_call"
RUN_START = "plan.started"
RUN_END = frozenset({"plan.completed", "plan.aborted"})
ENVELOPE_TYPE = "runner.event"


def looks_like(event: dict[str, Any]) -> bool:
    """A bare graph-tool-call event: a known type, or the runner's own marker fields."""
    etype = event.get("type")
    return etype in EVENT_MODELS or (
        "graph_tool_call_version" in event or event.get("stage") == "runner"
    )


def starts_run(etype: str, event: dict[str, Any]) -> bool:
    return etype == RUN_START


# -- field policy -----------------------------------------------------------------------------
# one table, not 21 lines
_KEEP = """type stage plan_id step_id tool graph_tool_call_version index total step_count
    duration_ms output_size total_duration_ms attempt max_attempts delay_ms failed_step
    old_plan_id new_plan_id excluded_tools field_name recovered_path""".split()  # noqa: SIM905

FIELD_POLICY = r.FieldPolicy(
    {
        **{name: r.KEEP for name in _KEEP},
        "goal": r.GOAL,
        "reason": r.GOAL,
        "args_resolved": r.SCRUB,
        "unresolved": r.SCRUB,
        "output_preview": r.PREVIEW,
        "output": r.PREVIEW,
        "value_preview": r.PREVIEW,
        "error": r.ERROR,
        "trace_steps": r.TRACE_STEPS,
        "trace_metadata": r.TRACE_METADATA,
        "changes": r.COERCION_CHANGES,
    }
)


def columns(payload: dict[str, Any]) -> Columns:
    """``(plan_id, step_id, tool)`` of a scrubbed event: its own flat fields."""
    return text(payload.get("plan_id")), text(payload.get("step_id")), text(payload.get("tool"))


# -- fold -------------------------------------------------------------------------------------
# seed 000, "Recommended UI grouping": the status of a run is the group of its latest event.
STATUS_GROUPS = {
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
}
NOT_CALLED_KINDS = ("binding", "output_binding")  # the tool was never invoked


def _ids(p: dict[str, Any]) -> tuple[str | None, str | None]:
    return text(p.get("plan_id")), text(p.get("step_id"))


def _flow(run: RunFold) -> DataFlowState | None:
    """The data-flow state of an open graph-tool-call run (``data_flow_evidence``)."""
    if run.finished or run.source != SOURCE:
        return None
    state = run.runner_state
    if not isinstance(state, DataFlowState):
        state = run.runner_state = DataFlowState()
    return state


def _every_event(run: RunFold, e: Event) -> None:
    p = e.payload
    run.engine_version = text(p.get("graph_tool_call_version")) or run.engine_version
    plan_id = text(p.get("plan_id"))
    if plan_id and not run.plan_ids:
        run.plan_ids.append(plan_id)


def _plan_started(run: RunFold, e: Event) -> None:
    goal = e.payload.get("goal")
    if run.goal is None and isinstance(goal, str):
        run.goal = goal


def _step_started(run: RunFold, e: Event) -> None:
    p = e.payload
    plan_id, step_id = _ids(p)
    run.step_count += 1
    tool = text(p.get("tool"))
    if tool:
        run.tools.append(tool)
        run.step_tools[(plan_id, step_id)] = tool
    for seen in run.waiting_bindings.pop((plan_id, step_id), ()):
        seen.tool = tool
        run.emit_binding(seen)
    flow = _flow(run)
    if flow is not None:
        run.flows.extend(flow.step_started(run, e))


def _step_completed(run: RunFold, e: Event) -> None:
    p = e.payload
    plan_id, step_id = _ids(p)
    tool = text(p.get("tool")) or run.tool_of(plan_id, step_id)
    if tool:
        duration = number(p.get("duration_ms"))
        run.tool_calls.append(ToolCall(e, tool, True, step_id, duration, run.collection_id))
        if not run.finished and plan_id == (run.plan_ids[-1] if run.plan_ids else None):
            run.selected_target = tool  # the last completed step of the final plan
    flow = _flow(run)
    if flow is not None:
        flow.step_completed(run, e)


def _plan_repaired(run: RunFold, e: Event) -> None:
    p = e.payload
    run.repair_count += 1
    new = text(p.get("new_plan_id"))
    if new and new not in run.plan_ids:
        run.plan_ids.append(new)
    failed = text(p.get("failed_step"))
    tool = run.tool_of(text(p.get("plan_id")), failed)
    if tool:
        run.tool_calls.append(ToolCall(e, tool, False, failed, None, run.collection_id))


def _args_coerced(run: RunFold, e: Event) -> None:
    run.coercion_count += 1
    run.coercions.append(Observed(e, run.collection_id, e.tool))


def _binding_repaired(run: RunFold, e: Event) -> None:
    plan_id, step_id = _ids(e.payload)
    run.binding_repair_count += 1
    tool = text(e.payload.get("tool")) or run.tool_of(plan_id, step_id)
    seen = Observed(e, run.collection_id, tool)
    if tool is None:
        run.waiting_bindings.setdefault((plan_id, step_id), []).append(seen)
    else:
        run.emit_binding(seen)
    flow = _flow(run)
    if flow is not None:
        flow.binding_repaired(e)


def _binding_repaired_note(p: dict[str, Any]) -> list[str]:
    return [f"recovered_path={p['recovered_path']}"] if p.get("recovered_path") else []


def _finish(run: RunFold, e: Event, success: bool) -> None:
    if run.finished:
        return
    p = e.payload
    run.finished, run.success, run.ended_at = True, success, e.recorded_at
    run.total_duration_ms = number(p.get("total_duration_ms"))
    if not success:
        run.failed_step = text(p.get("failed_step"))
        run.failed_tool = run.tool_of(text(p.get("plan_id")), run.failed_step) or _trace_tool(
            p.get("trace_steps"), run.failed_step
        )
        run.outcome = classify(p.get("error"), p.get("trace_metadata"))
        run.selected_target = None


def _trace_tool(trace_steps: Any, step_id: str | None) -> str | None:
    if not isinstance(trace_steps, list) or step_id is None:
        return None
    for step in reversed(trace_steps):
        if isinstance(step, dict) and step.get("id") == step_id:
            return text(step.get("tool"))
    return None


def _failure(run: RunFold, e: Event, step_id: str | None, tool: str | None) -> None:
    """A failure row for *e* (a failed, retried or skipped step, or the aborted plan)."""
    p = e.payload
    error = p.get("error")
    cls = classify(error, p.get("trace_metadata"))
    attempt = p.get("attempt") if isinstance(p.get("attempt"), int) else None
    named = (
        (text(error.get("field_name")) or text(error.get("field")))
        if isinstance(error, dict)
        else None
    )
    run.failures.append(
        Failure(
            e,
            cls,
            text(p.get("plan_id")),
            step_id,
            tool,
            attempt,
            named or cls.field_name,
            run.collection_id,
        )
    )
    if e.type != "plan.aborted" and tool and cls.error_kind not in NOT_CALLED_KINDS:
        duration = number(p.get("duration_ms")) if e.type == "step.failed" else None
        run.tool_calls.append(ToolCall(e, tool, False, step_id, duration, run.collection_id))


def _step_failure(run: RunFold, e: Event) -> None:
    plan_id, step_id = _ids(e.payload)
    _failure(run, e, step_id, text(e.payload.get("tool")) or run.tool_of(plan_id, step_id))


def _step_retrying(run: RunFold, e: Event) -> None:
    run.retry_count += 1
    _step_failure(run, e)


def _step_skipped(run: RunFold, e: Event) -> None:
    run.skip_count += 1
    _step_failure(run, e)


def _plan_completed(run: RunFold, e: Event) -> None:
    _finish(run, e, success=True)


def _plan_aborted(run: RunFold, e: Event) -> None:
    _finish(run, e, success=False)
    _failure(run, e, run.failed_step, run.failed_tool)


HANDLERS: dict[str, Handler] = {
    "plan.started": _plan_started,
    "step.started": _step_started,
    "step.completed": _step_completed,
    "step.failed": _step_failure,
    "step.retrying": _step_retrying,
    "step.skipped": _step_skipped,
    "plan.repaired": _plan_repaired,
    "args.coerced": _args_coerced,
    "binding.repaired": _binding_repaired,
    "plan.completed": _plan_completed,
    "plan.aborted": _plan_aborted,
}

ADAPTER = RunnerAdapter(
    source=SOURCE,
    looks_like=looks_like,
    models=EVENT_MODELS,
    field_policy=FIELD_POLICY,
    handlers=HANDLERS,
    starts_run=starts_run,
    columns=columns,
    every_event=_every_event,
    status_groups=STATUS_GROUPS,
    troubleshoot=troubleshoot,
    trouble=frozenset({"step.failed", "plan.aborted", "step.retrying"}),
    notes={"binding.repaired": _binding_repaired_note},
)
