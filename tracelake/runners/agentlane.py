"""The agentlane runner adapter: ``run_events()`` events in their ``to_dict()`` form.

Contract: each line is ``{"type": KIND, "payload": {...}}`` (seed 004; samples in
``shared/samples/agentlane``). The payload repeats ``kind``. Only fields that tracelake reads
are checked; everything else is kept as is (the contract is additive).

Field policy: a table per payload, with ``model_stream`` events carrying the provider's raw
stream object (dropped). Fold: a run is a root agent's lifetime; tool calls are ``tool_start``
/ ``tool_end`` pairs keyed by their call id.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from tracelake.runners import field_rules as r
from tracelake.runners.adapter import Columns, RunnerAdapter
from tracelake.runners.failure_reasons import classify
from tracelake.runners.run_model import (
    ATTENTION,
    PARTIAL,
    RUNNING,
    Event,
    Failure,
    Handler,
    Hint,
    RunFold,
    text,
)
from tracelake.runners.run_model import ToolCall as ToolAttempt

SOURCE = "agentlane"


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


def body(event: dict[str, Any]) -> dict[str, Any]:
    """The event's payload object (what ``PAYLOAD_MODELS`` describe), else the event itself."""
    payload = event.get("payload")
    return payload if isinstance(payload, dict) else event


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


def starts_run(etype: str, event: dict[str, Any]) -> bool:
    return is_run_start(event)


# -- field policy -----------------------------------------------------------------------------
_STREAM_EVENT: r.Rules = {
    "kind": r.KEEP,
    "raw": r.DROP,
    "provider_event_type": r.KEEP,
    "item_index": r.KEEP,
    "item_type": r.KEEP,
    "tool_call_id": r.KEEP,
    "tool_call_index": r.KEEP,
    "required_tool_call_ids": r.KEEP,
    # Deltas are fragments: a value split across two of them escapes detection, and the key
    # naming it may sit in another delta. The complete text is in llm_end / agent_end and the
    # complete arguments in tool_start, both scrubbed; a delta keeps only its length.
    "text": r.LENGTH_ONLY,
    "arguments_delta": r.LENGTH_ONLY,
    "reasoning": r.LENGTH_ONLY,
    "reasoning_signature": r.DROP,
    "response": r.PREVIEW,
    "input_messages": r.PREVIEW,
    "error": r.ERROR,
}
_TOOL_CALL = r.Fields(
    {
        "id": r.KEEP,
        "type": r.KEEP,
        "function": r.Fields({"name": r.KEEP, "arguments": r.JSON_STRING}),
    }
)
_PAYLOAD: r.Rules = {
    **{
        name: r.KEEP
        for name in [
            "task_name",
            "task_id",
            "parent_task_id",
            "is_root",
            "kind",
            "is_delegation",
            "target_name",
            "boundary",
            "ok",
        ]
    },
    "tool_call": _TOOL_CALL,
    "error": r.ERROR,
    "result": r.PREVIEW,
    "messages": r.PREVIEW,
    "response": r.PREVIEW,
    "snapshot": r.Fields({"shim_state": r.PREVIEW}, otherwise=r.PREVIEW),
    "explanation": r.Text(500),
}
FIELD_POLICY = r.FieldPolicy(
    {"type": r.KEEP, "payload": r.Fields(_PAYLOAD)},
    by_type={
        "model_stream": {
            "type": r.KEEP,
            "payload": r.Fields({**_PAYLOAD, "event": r.Fields(_STREAM_EVENT)}),
        }
    },
)


def columns(payload: dict[str, Any]) -> Columns:
    """``(None, None, tool)``: the tool is the name of the payload's tool call's function."""
    body = payload.get("payload")
    if isinstance(body, dict):
        call = body.get("tool_call")
        fn = call.get("function") if isinstance(call, dict) else None
        return None, None, (text(fn.get("name")) if isinstance(fn, dict) else None)
    return None, None, None


# -- fold -------------------------------------------------------------------------------------
STATUS_GROUPS = {
    "agent_start": RUNNING,
    "llm_start": RUNNING,
    "tool_start": RUNNING,
    "handoff_start": RUNNING,
    "llm_end": PARTIAL,
    "handoff_end": PARTIAL,
}


def _payload(e: Event) -> dict[str, Any]:
    outer = e.payload.get("payload")
    return outer if isinstance(outer, dict) else {}


def _tool_call(p: dict[str, Any]) -> tuple[str | None, str | None]:
    call = p.get("tool_call")
    if not isinstance(call, dict):
        return None, None
    fn = call.get("function")
    name = text(fn.get("name")) if isinstance(fn, dict) else None
    return name, text(call.get("id"))


def _first_user_message(messages: Any) -> str | None:
    if isinstance(messages, dict):
        messages = messages.get("_preview")
    if not isinstance(messages, list):
        return None
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
            return str(m["content"])
    return None


def _agent_start(run: RunFold, e: Event) -> None:
    p = _payload(e)
    if p.get("is_root") is not True:
        return
    task = text(p.get("task_id"))
    if task and task not in run.plan_ids:
        run.plan_ids.append(task)
    run.collection_id = run.collection_id or text(p.get("task_name"))


def _llm_start(run: RunFold, e: Event) -> None:
    p = _payload(e)
    if p.get("is_root") is True and run.goal is None:
        run.goal = _first_user_message(p.get("messages"))


def _tool_start(run: RunFold, e: Event) -> None:
    run.step_count += 1
    name, call_id = _tool_call(_payload(e))
    if name:
        run.tools.append(name)
        run.step_tools[(None, call_id)] = name


def _tool_end(run: RunFold, e: Event) -> None:
    p = _payload(e)
    name, call_id = _tool_call(p)
    name = name or run.tool_of(None, call_id) or "?"
    run.step_tools.pop((None, call_id), None)  # what is left at agent_end never ended
    ok = p.get("ok") is not False
    run.tool_calls.append(ToolAttempt(e, name, ok, call_id, None, run.collection_id))
    if ok and p.get("is_root") is True:
        run.selected_target = name
    if not ok:
        cls = classify(p.get("error"))
        run.failures.append(
            Failure(e, cls, None, call_id, name, None, cls.field_name, run.collection_id)
        )
        run.status = ATTENTION
    elif not run.finished:
        run.status = PARTIAL


def _agent_end(run: RunFold, e: Event) -> None:
    p = _payload(e)
    if p.get("is_root") is not True or run.finished:
        return
    run.finished, run.ended_at = True, e.recorded_at
    run.success = p.get("result") is not None
    if run.success:
        return
    open_calls = list(run.step_tools.items())
    run.outcome = classify(p.get("error"), default_stage="execute" if open_calls else "agent")
    if open_calls:
        (_, run.failed_step), run.failed_tool = open_calls[-1]
    run.failures.append(
        Failure(
            e, run.outcome, None, run.failed_step, run.failed_tool, None, None, run.collection_id
        )
    )
    run.selected_target = None


def troubleshoot(run: RunFold, types: frozenset[str]) -> list[Hint]:
    tool = run.failed_tool
    if not run.finished or run.success or not tool:
        return []
    return [
        Hint(
            f"tool_start of {tool} without tool_end, root agent_end without result",
            "the tool raised and the run ended without a result",
            f"the exception of {tool} in the tool's and the runner's logs",
        )
    ]


def _agent_end_note(p: dict[str, Any]) -> list[str]:
    return ["no result"] if p.get("is_root") and p.get("result") is None else []


HANDLERS: dict[str, Handler] = {
    "agent_start": _agent_start,
    "llm_start": _llm_start,
    "tool_start": _tool_start,
    "tool_end": _tool_end,
    "agent_end": _agent_end,
}

ADAPTER = RunnerAdapter(
    source=SOURCE,
    looks_like=looks_like,
    models=PAYLOAD_MODELS,
    field_policy=FIELD_POLICY,
    handlers=HANDLERS,
    starts_run=starts_run,
    body=body,
    columns=columns,
    status_groups=STATUS_GROUPS,
    # status only, or nothing the fold needs (streams, approvals, snapshots, plans)
    passive=frozenset(PAYLOAD_MODELS) - set(HANDLERS),
    troubleshoot=troubleshoot,
    hidden=frozenset({"model_stream", "state_snapshot"}),  # provider streams, runner state
    notes={"agent_end": _agent_end_note},
)
