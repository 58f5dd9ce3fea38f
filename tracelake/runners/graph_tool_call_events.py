"""graph-tool-call's event contract: ``PlanRunner.run_stream()``'s eleven dataclasses as models.

The reference is the real library (``graph_tool_call.plan.runner``): every event shares ``type,
stage, plan_id, graph_tool_call_version, trace_metadata``. The contract is additive: unknown
fields are allowed and kept, unknown types are stored untouched. These models only *check* what
is known; the stored payload is always the event's own dict.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class RunnerEvent(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    stage: str = "runner"
    plan_id: str = ""
    graph_tool_call_version: str = ""
    trace_metadata: dict[str, Any] = {}


class StepEvent(RunnerEvent):
    step_id: str = ""
    tool: str = ""


class PlanStarted(RunnerEvent):
    goal: str = ""
    step_count: int = 0


class StepStarted(StepEvent):
    args_resolved: dict[str, Any] = {}
    index: int = 0
    total: int = 0


class StepCompleted(StepEvent):
    duration_ms: int = 0
    output_preview: Any = None
    output_size: int = 0


class StepFailed(StepEvent):
    error: dict[str, Any] = {}
    duration_ms: int = 0


class TraceStep(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    tool: str = ""
    duration_ms: int = 0
    retries: int = 0
    error: dict[str, Any] | None = None


class PlanCompleted(RunnerEvent):
    output: Any = None
    total_duration_ms: int = 0
    trace_steps: list[TraceStep] = []


class PlanAborted(RunnerEvent):
    failed_step: str = ""
    error: dict[str, Any] = {}
    total_duration_ms: int = 0
    trace_steps: list[TraceStep] = []


class StepRetrying(StepEvent):
    attempt: int = 0
    max_attempts: int = 0
    delay_ms: int = 0
    error: dict[str, Any] = {}


class StepSkipped(StepEvent):
    reason: str = ""
    error: dict[str, Any] = {}


class PlanRepaired(RunnerEvent):
    old_plan_id: str = ""
    new_plan_id: str = ""
    failed_step: str = ""
    excluded_tools: list[str] = []
    step_count: int = 0


class BindingRepaired(StepEvent):
    field_name: str = ""
    recovered_path: str = ""
    value_preview: Any = None


class ArgsCoerced(StepEvent):
    changes: list[dict[str, Any]] = []
    unresolved: list[str] = []


EVENT_MODELS: dict[str, type[RunnerEvent]] = {
    "plan.started": PlanStarted,
    "step.started": StepStarted,
    "step.completed": StepCompleted,
    "step.failed": StepFailed,
    "plan.completed": PlanCompleted,
    "plan.aborted": PlanAborted,
    "step.retrying": StepRetrying,
    "step.skipped": StepSkipped,
    "plan.repaired": PlanRepaired,
    "binding.repaired": BindingRepaired,
    "args.coerced": ArgsCoerced,
}
