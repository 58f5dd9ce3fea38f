"""Field rules for each runner's events (graph-tool-call PlanRunner, agentlane Runner).

graph-tool-call events arrive as ``dataclasses.asdict(event)``: flat, the same field means
the same thing in every event type, so one table covers all eleven types. agentlane events
arrive as ``to_dict()`` = ``{"type": KIND, "payload": {...}}``: a table per payload, with
``model_stream`` events carrying the provider's raw stream object (dropped).
"""

from __future__ import annotations

from typing import Any

from tracelake.scrub import policy as p
from tracelake.scrub.preview import preview
from tracelake.scrub.walk import Walker

_GTC_KEEP = [
    "type",
    "stage",
    "plan_id",
    "step_id",
    "tool",
    "graph_tool_call_version",
    "index",
    "total",
    "step_count",
    "duration_ms",
    "output_size",
    "total_duration_ms",
    "attempt",
    "max_attempts",
    "delay_ms",
    "failed_step",
    "old_plan_id",
    "new_plan_id",
    "excluded_tools",
    "field_name",
    "recovered_path",
]

GTC_RULES: dict[str, p.Rule] = {
    **{name: p.keep for name in _GTC_KEEP},
    "goal": p.goal,
    "reason": p.goal,
    "args_resolved": p.scrub,
    "unresolved": p.scrub,
    "output_preview": preview,
    "output": preview,
    "value_preview": preview,
    "error": p.error,
    "trace_steps": p.trace_steps,
    "trace_metadata": p.trace_metadata,
    "changes": p.coercion_changes,
}


def _text(limit: int) -> p.Rule:
    def rule(w: Walker, value: Any, path: str) -> Any:
        if isinstance(value, str):
            if value[:1] in "{[":
                return w.json_text(value, path, limit=limit)
            return w.text(value, path, limit=limit)
        return w.value(value, path)

    return rule


def _length_only(w: Walker, value: Any, path: str) -> Any:
    if isinstance(value, str):
        w.act("length_only")
        return {"_chars": len(value)}
    return w.value(value, path)


def _function(w: Walker, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        return p.scrub(w, value, path)
    return p.apply(w, value, {"name": p.keep, "arguments": p.json_string}, path)


def _tool_call(w: Walker, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        return p.scrub(w, value, path)
    return p.apply(w, value, {"id": p.keep, "type": p.keep, "function": _function}, path)


def _snapshot(w: Walker, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        return preview(w, value, path)
    return p.apply(w, value, {"shim_state": preview}, path)


_STREAM_EVENT: dict[str, p.Rule] = {
    "kind": p.keep,
    "raw": p.drop,
    "provider_event_type": p.keep,
    "item_index": p.keep,
    "item_type": p.keep,
    "tool_call_id": p.keep,
    "tool_call_index": p.keep,
    "required_tool_call_ids": p.keep,
    # Deltas are fragments: a value split across two of them escapes detection, and the key
    # naming it may sit in another delta. The complete text is in llm_end / agent_end and the
    # complete arguments in tool_start, both scrubbed; a delta keeps only its length.
    "text": _length_only,
    "arguments_delta": _length_only,
    "reasoning": _length_only,
    "reasoning_signature": p.drop,
    "response": preview,
    "input_messages": preview,
    "error": p.error,
}


def _stream_event(w: Walker, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        return p.scrub(w, value, path)
    return p.apply(w, value, _STREAM_EVENT, path)


_AL_COMMON: dict[str, p.Rule] = {
    **{
        name: p.keep
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
    "tool_call": _tool_call,
    "error": p.error,
    "result": preview,
    "messages": preview,
    "response": preview,
    "snapshot": _snapshot,
    "explanation": _text(500),
}
AGENTLANE_PAYLOAD_RULES: dict[str, dict[str, p.Rule]] = {
    "model_stream": {**_AL_COMMON, "event": _stream_event},
}


def scrub_agentlane(w: Walker, event: dict[str, Any]) -> dict[str, Any]:
    kind = event.get("type")
    payload_rules = (
        AGENTLANE_PAYLOAD_RULES.get(kind, _AL_COMMON) if isinstance(kind, str) else (_AL_COMMON)
    )

    def payload(w: Walker, value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            return p.scrub(w, value, path)
        return p.apply(w, value, payload_rules, path)

    return p.apply(w, event, {"type": p.keep, "payload": payload})


def scrub_gtc(w: Walker, event: dict[str, Any]) -> dict[str, Any]:
    return p.apply(w, event, GTC_RULES)


def scrub_unknown(w: Walker, event: dict[str, Any]) -> dict[str, Any]:
    return p.apply(w, event, {"type": p.keep})
