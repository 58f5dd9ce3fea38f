"""``tracelake explain RUN_ID``: a run's timeline, where it failed, the likely cause, what to check.

Folds the run straight from the log (it works before ``tracelake project`` has run) and
applies seed 000's troubleshooting table, then the failure taxonomy's operator action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracelake.projections.fold import RunFold, fold
from tracelake.store import Store
from tracelake.store.records import StoredEvent


@dataclass(frozen=True, slots=True)
class Hint:
    symptom: str
    likely_cause: str
    check: str


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


# seed 000, "Troubleshooting"
BINDING = Hint(
    "plan.aborted with kind=binding",
    "a required producer value is missing",
    "inspect PlanStep.args bindings and upstream output_preview",
)
TOOL = Hint(
    "step.failed with kind=tool",
    "adapter executor raised",
    "inspect HTTP status, auth readiness, and executor logs",
)
NO_OUTPUT = Hint(
    "no step.completed events",
    "first step failed before output",
    "check step.failed.error and failed_step",
)
NO_COERCION = Hint(
    "args.coerced missing",
    "validate_args is off or tools map is absent",
    'configure PlanRunner(..., tools=..., validate_args="coerce")',
)
NO_RETRY = Hint(
    "retries never happen",
    "step is not retryable or no RetryPolicy is configured",
    "set PlanStep.retryable=True or RetryPolicy(retry_all=True)",
)


def explain(store: Store, run_id: str) -> Explanation | None:
    events = store.reader.run_events(run_id)
    if not events:
        return None
    events.sort(key=lambda e: e.position)
    run = fold(events)
    timeline = [_step(e) for e in events if e.type not in ("model_stream", "state_snapshot")]
    failed_at = None
    if run.finished and not run.success:
        failed_at = f"step {run.failed_step or '?'} (tool {run.failed_tool or '?'})"
        if run.outcome is not None:
            failed_at += f" at stage {run.outcome.stage}"
    return Explanation(run, timeline, failed_at, hints(run, events))


def hints(run: RunFold, events: list[StoredEvent]) -> list[Hint]:
    out: list[Hint] = []
    types = {e.type for e in events}
    kinds = {f.classification.error_kind for f in run.failures}
    reason = run.outcome.reason if run.outcome else None
    if run.source == "graph_tool_call":
        if "plan.aborted" in types and run.outcome and run.outcome.error_kind == "binding":
            out.append(BINDING)
        if "step.failed" in types and "tool" in kinds:
            out.append(TOOL)
        if run.finished and not run.success and "step.completed" not in types:
            out.append(NO_OUTPUT)
        if (
            run.outcome is not None
            and run.outcome.retryable
            and run.retry_count == 0
            and not run.success
        ):
            out.append(NO_RETRY)
        status = run.outcome.http_status if run.outcome else None
        if run.coercion_count == 0 and (
            reason == "missing_required_argument" or status in (400, 422)
        ):
            out.append(NO_COERCION)
    if run.source == "agentlane" and run.finished and not run.success and run.failed_tool:
        out.append(
            Hint(
                f"tool_start of {run.failed_tool} without tool_end, root agent_end without result",
                "the tool raised and the run ended without a result",
                f"the exception of {run.failed_tool} in the tool's and the runner's logs",
            )
        )
    seen: set[str] = set()
    for f in run.failures:
        c = f.classification
        if c.reason not in seen:
            seen.add(c.reason)
            out.append(Hint(f"failure reason {c.reason}", f"stage {c.stage}", c.operator_action))
    return out


def _step(e: StoredEvent) -> Step:
    p: dict[str, Any] = e.payload
    inner = p.get("payload")
    body: dict[str, Any] = inner if e.source == "agentlane" and isinstance(inner, dict) else p
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
    if etype == "binding.repaired" and p.get("recovered_path"):
        parts.append(f"recovered_path={p['recovered_path']}")
    if etype == "agent_end" and p.get("is_root") and p.get("result") is None:
        parts.append("no result")
    return " ".join(parts)
