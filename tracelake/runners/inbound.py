"""Inbound events: recognise what came in and check it against its runner's contract.

:func:`classify` accepts every form the seeds name: graph-tool-call dataclass objects, their
``dataclasses.asdict()`` dicts, the SSE envelope ``{"type": "runner.event", "run_id": ...,
"event": {...}}``, and agentlane ``to_dict()`` events (or the event objects themselves). The
result is an :class:`InboundEvent` holding a fresh JSON-compatible copy of the event. Which
runner an event belongs to is asked of the registry (``runners.registry``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from tracelake.errors import ContractError
from tracelake.runners.graph_tool_call import ENVELOPE_TYPE
from tracelake.runners.normalize import JSONValue, to_jsonable
from tracelake.runners.registry import SOURCE_UNKNOWN, adapter_for, recognise

_ENVELOPE_TYPES = frozenset({ENVELOPE_TYPE, "run.event"})


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
        adapter = adapter_for(self.source)
        return adapter is not None and adapter.starts_run(self.type, self.event)


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
    adapter = recognise(obj)
    if adapter is None:
        return InboundEvent(SOURCE_UNKNOWN, etype, obj, run_id, event_id, seq)
    _validate(adapter.models.get(etype), adapter.body(obj), etype)
    return InboundEvent(adapter.source, etype, obj, run_id, event_id, seq)


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
