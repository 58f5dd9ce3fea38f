"""What a run is, whatever runner produced it: the state a runner adapter's fold handlers fill.

``projections.fold`` folds a run's stored events in order and hands each one to its runner
adapter's handler (keyed by event type); the handlers record steps, tool calls, failures and
the finish here. Projections read the result. Only scrubbed, stored payloads are read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from tracelake.runners.failure_reasons import Classification

RUNNING, PARTIAL, ATTENTION, SUCCESS, FAILED = (
    "Running",
    "Partial progress",
    "Needs attention",
    "Success",
    "Failed",
)


class Event(Protocol):
    """What a fold reads of a stored event (``store.records.StoredEvent`` is one)."""

    @property
    def position(self) -> int: ...
    @property
    def run_id(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def recorded_at(self) -> datetime: ...
    @property
    def payload(self) -> dict[str, Any]: ...
    @property
    def plan_id(self) -> str | None: ...
    @property
    def step_id(self) -> str | None: ...
    @property
    def tool(self) -> str | None: ...
    @property
    def collection_id(self) -> str | None: ...


@dataclass(slots=True)
class Failure:
    event: Event
    classification: Classification
    plan_id: str | None
    step_id: str | None
    tool: str | None
    attempt: int | None = None
    field_name: str | None = None
    collection_id: str | None = None


@dataclass(slots=True)
class ToolCall:
    event: Event
    tool: str
    ok: bool
    step_id: str | None
    duration_ms: float | None
    collection_id: str | None = None


@dataclass(slots=True)
class Observed:
    """An event a projection turns into rows (a binding repair, a coercion), with what the run
    knew when it happened."""

    event: Event
    collection_id: str | None
    tool: str | None


@dataclass(slots=True)
class RunFold:
    """A run folded up to some position. Per-event items (``failures``, ``tool_calls``,
    ``bindings``, ``coercions``, ``flows``) hold what the last fold step added: the projection
    runner hands projections only the rows of new events."""

    run_id: str
    source: str
    started_at: datetime
    last_event: Event
    collection_id: str | None = None
    status: str = RUNNING
    finished: bool = False
    success: bool | None = None
    ended_at: datetime | None = None
    finish_position: int | None = None  # the event that finished the run
    record: dict[str, Any] | None = None  # the learning record, frozen at the finish
    finished_now: bool = False  # the last fold step finished the run
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
    # what a runner adapter keeps between events of an open run (graph-tool-call: its
    # data-flow index); dropped when the run finishes
    runner_state: object | None = None

    def tool_of(self, plan_id: str | None, step_id: str | None) -> str | None:
        return self.step_tools.get((plan_id, step_id))

    def emit_binding(self, seen: Observed) -> None:
        p = seen.event.payload
        self.bindings.append(seen)
        self.binding_keys.add(
            (
                seen.collection_id or "",
                seen.tool or "",
                text(p.get("field_name")) or "",
                text(p.get("recovered_path")) or "",
            )
        )

    def emit_waiting_bindings(self) -> None:
        """At the run's end: the repairs whose step never started are emitted without a tool."""
        for waiting in self.waiting_bindings.values():
            for seen in waiting:
                self.emit_binding(seen)
        self.waiting_bindings.clear()

    def emitted(self) -> None:
        """Forget the per-event items: their rows are written."""
        self.failures, self.tool_calls, self.bindings = [], [], []
        self.coercions, self.flows = [], []
        self.finished_now = False


Handler = Callable[[RunFold, Event], None]


@dataclass(frozen=True, slots=True)
class Hint:
    """A troubleshooting line for ``tracelake explain``: what is seen, why, what to check."""

    symptom: str
    likely_cause: str
    check: str


Troubleshoot = Callable[[RunFold, frozenset[str]], list[Hint]]  # (run, its event types)


def text(value: Any) -> str | None:
    """A non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def number(value: Any) -> float | None:
    """A JSON number as a float (``True`` is not a number), else ``None``."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
