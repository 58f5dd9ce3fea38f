"""Contracts for agentlane ``run_events()`` events in their ``to_dict()`` form.

Each line is ``{"type": KIND, "payload": {...}}`` (seed 004; samples in
``shared/samples/agentlane``). The payload repeats ``kind``. Only fields that tracelake reads
are checked; everything else is kept as is (the contract is additive).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Payload(BaseModel):
    model_config = ConfigDict(extra="allow")

    kind: str | None = None


class TaskPayload(Payload):
    task_name: str | None = None
    task_id: str | None = None
    parent_task_id: str | None = None
    is_root: bool | None = None


class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str | None = None
    arguments: str | None = None


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    function: FunctionCall | None = None
    type: str | None = None


class ToolError(BaseModel):
    model_config = ConfigDict(extra="allow")

    message: str | None = None
    kind: str | None = None


class AgentStart(TaskPayload):
    pass


class AgentEnd(TaskPayload):
    result: Any = None


class LLMStart(TaskPayload):
    messages: list[Any] | None = None


class LLMEnd(TaskPayload):
    response: Any = None


class ToolStart(TaskPayload):
    tool_call: ToolCall | None = None
    is_delegation: bool | None = None


class ToolEnd(ToolStart):
    result: Any = None
    ok: bool | None = None
    error: ToolError | None = None


class HandoffStart(TaskPayload):
    tool_call: ToolCall | None = None
    target_name: str | None = None


class HandoffEnd(HandoffStart):
    result: Any = None


class StreamEvent(BaseModel):
    model_config = ConfigDict(extra="allow")

    kind: str | None = None


class ModelStream(Payload):
    event: StreamEvent | None = None


class ToolApproval(Payload):
    event: dict[str, Any] | None = None


class StateSnapshot(Payload):
    boundary: str | None = None
    snapshot: dict[str, Any] | None = None


class PlanItem(BaseModel):
    model_config = ConfigDict(extra="allow")

    step: str | None = None
    status: str | None = None


class PlanUpdated(TaskPayload):
    plan: list[PlanItem] | None = None
    explanation: str | None = None
    tool_call: ToolCall | None = None


PAYLOAD_MODELS: dict[str, type[Payload]] = {
    "agent_start": AgentStart,
    "agent_end": AgentEnd,
    "llm_start": LLMStart,
    "llm_end": LLMEnd,
    "tool_start": ToolStart,
    "tool_end": ToolEnd,
    "handoff_start": HandoffStart,
    "handoff_end": HandoffEnd,
    "model_stream": ModelStream,
    "tool_approval": ToolApproval,
    "state_snapshot": StateSnapshot,
    "plan_updated": PlanUpdated,
}


def looks_like(event: dict[str, Any]) -> bool:
    """agentlane's to_dict() shape: a string type and a payload object, nothing runner-ish."""
    return isinstance(event.get("payload"), dict) and "graph_tool_call_version" not in event


def is_run_start(event: dict[str, Any]) -> bool:
    """A root ``agent_start`` opens a new run in a bare stream (seed 004: lineage)."""
    payload = event.get("payload")
    return (
        event.get("type") == "agent_start"
        and isinstance(payload, dict)
        and payload.get("is_root") is True
    )
