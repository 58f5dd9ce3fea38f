"""Event contracts: recognise what came in and check it, in one place.

:func:`classify` accepts every form the seeds name: graph-tool-call dataclass objects, their
``dataclasses.asdict()`` dicts, the SSE envelope ``{"type": "runner.event", "run_id": ...,
"event": {...}}``, and agentlane ``to_dict()`` events (or the event objects themselves). The
result is an :class:`InboundEvent` holding a fresh JSON-compatible copy of the event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from tracelake.contracts import agentlane, graph_tool_call
from tracelake.contracts.jsonsafe import JSONValue, to_jsonable
from tracelake.errors import ContractError

__all__ = [
    "SOURCE_AGENTLANE",
    "SOURCE_GRAPH_TOOL_CALL",
    "SOURCE_UNKNOWN",
    "InboundEvent",
    "classify",
    "classify_object",
    "to_jsonable",
]

SOURCE_GRAPH_TOOL_CALL = "graph_tool_call"
SOURCE_AGENTLANE = "agentlane"
SOURCE_UNKNOWN = "unknown"

_ENVELOPE_TYPES = frozenset({graph_tool_call.ENVELOPE_TYPE, "run.event"})


@dataclass(frozen=True, slots=True)
class InboundEvent:
    """One recognised event, before scrubbing. ``event`` is a private JSON-compatible copy."""

    source: str
    type: str
    event: dict[str, Any]
    run_id: str | None = None
    event_id: str | None = None
    seq: int | None = None

    @property
    def starts_run(self) -> bool:
        if self.source == SOURCE_GRAPH_TOOL_CALL:
            return self.type == graph_tool_call.RUN_START
        if self.source == SOURCE_AGENTLANE:
            return agentlane.is_run_start(self.event)
        return False


def classify_object(obj: Any, max_depth: int) -> InboundEvent:
    """Classify a Python object (dataclass, dict, agentlane event); copies it first."""
    tree = to_jsonable(obj, max_depth)
    if not isinstance(tree, dict):
        raise ContractError("not_an_object", f"expected an event object, got {type(obj).__name__}")
    return classify(tree)


def classify(obj: dict[str, Any]) -> InboundEvent:
    """Classify an already JSON-compatible dict (owned by the caller of this function)."""
    run_id = event_id = None
    seq: int | None = None
    inner = obj.get("event")
    if isinstance(inner, dict) and (obj.get("type") in _ENVELOPE_TYPES or "type" not in obj):
        run_id = _optional_str(obj, "run_id")
        event_id = _optional_str(obj, "event_id")
        seq = _optional_seq(obj)
        obj = inner
    etype = obj.get("type")
    if not isinstance(etype, str) or not etype:
        raise ContractError("missing_type", "the event has no string field 'type'")
    if graph_tool_call.looks_like(obj):
        source = SOURCE_GRAPH_TOOL_CALL
        _validate(graph_tool_call.EVENT_MODELS.get(etype), obj, etype)
    elif agentlane.looks_like(obj):
        source = SOURCE_AGENTLANE
        _validate(agentlane.PAYLOAD_MODELS.get(etype), obj["payload"], etype)
    else:
        source = SOURCE_UNKNOWN
    return InboundEvent(source, etype, obj, run_id, event_id, seq)


def _validate(model: type[BaseModel] | None, data: JSONValue, etype: str) -> None:
    if model is None:
        return  # unknown types are kept, never rejected (the contract is additive)
    try:
        model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ContractError(
            "contract_violation", f"{etype}: field {where!r}: {first['msg']}"
        ) from None


def _optional_str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > 200:
        raise ContractError(
            "contract_violation", f"envelope field {key!r} must be a string of 1-200 chars"
        )
    return value


def _optional_seq(obj: dict[str, Any]) -> int | None:
    value = obj.get("seq")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**31:
        raise ContractError("contract_violation", "envelope field 'seq' must be a positive integer")
    return value
